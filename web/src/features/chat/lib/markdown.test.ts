import { describe, expect, it } from 'vitest';
import { codeLanguage, renderMarkdown } from './markdown';

function dom(html: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = html;
  return div;
}

describe('renderMarkdown', () => {
  it('renders Markdown', () => {
    const html = dom(renderMarkdown('# Title\n\nSome *emphasis* and `code`.\n\n- one\n- two'));
    expect(html.querySelector('h1')?.textContent).toBe('Title');
    expect(html.querySelector('em')?.textContent).toBe('emphasis');
    expect(html.querySelectorAll('li')).toHaveLength(2);
  });

  it('highlights fenced code in a registered language, and escapes the rest', () => {
    const html = dom(renderMarkdown('```python\ndef f(x):\n    return "<b>"\n```\n\n```nosuchlang\n<i>x</i>\n```'));
    const [python, unknown] = html.querySelectorAll('pre');
    expect(python?.getAttribute('data-language')).toBe('python');
    expect(python?.querySelector('.hljs-keyword')?.textContent).toBe('def');
    expect(python?.textContent).toContain('return "<b>"');
    expect(python?.querySelector('b')).toBeNull();
    expect(unknown?.querySelector('i')).toBeNull();
    expect(unknown?.textContent).toContain('<i>x</i>');
  });

  it('never injects raw HTML from the model', () => {
    const html = dom(
      renderMarkdown('Hi <script>alert(1)</script> <img src=x onerror="alert(1)"> <b onclick="x()">bold</b>\n\n<iframe src="https://evil"></iframe>'),
    );
    expect(html.querySelector('script, img, iframe, b')).toBeNull();
    expect(html.textContent).toContain('<script>alert(1)</script>');
    for (const element of html.querySelectorAll('*')) {
      expect([...element.attributes].map((a) => a.name).filter((name) => name.startsWith('on'))).toEqual([]);
    }
  });

  it('drops script links and opens others apart', () => {
    const html = dom(renderMarkdown('[click](javascript:alert(1)) and [site](https://example.com)'));
    const links = [...html.querySelectorAll('a')];
    expect(links.some((a) => (a.getAttribute('href') ?? '').startsWith('javascript'))).toBe(false);
    const site = links.find((a) => a.textContent === 'site');
    expect(site?.getAttribute('href')).toBe('https://example.com');
    expect(site?.getAttribute('target')).toBe('_blank');
    expect(site?.getAttribute('rel')).toContain('noopener');
  });

  it('turns images into links: no request to an address the model chose', () => {
    const html = dom(renderMarkdown('![a cat](https://example.com/cat.png)'));
    expect(html.querySelector('img')).toBeNull();
    expect(html.querySelector('a')?.textContent).toBe('a cat');
  });

  it('renders half-written Markdown while streaming', () => {
    const html = dom(renderMarkdown('Here:\n\n```js\nconst a = 1;'));
    expect(html.querySelector('pre code')?.textContent).toContain('const a = 1;');
  });

  it('knows the languages it highlights', () => {
    expect(codeLanguage('ts title="x"')).toBe('ts');
    expect(codeLanguage('klingon')).toBeNull();
    expect(codeLanguage(undefined)).toBeNull();
  });
});
