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

describe('citations', () => {
  const sources = [
    { href: 'https://example.org/a', title: 'Page A' },
    null,
    { href: 'https://example.org/c', title: 'Page "C" <c>' },
  ];
  const cites = (html: HTMLElement) => [...html.querySelectorAll('a[data-citation]')];

  it('link [n] to the nth source, opened apart, and leave the others as text', () => {
    const html = dom(renderMarkdown('One [1], two [2], three [3][1], four [4].', sources));
    expect(cites(html).map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('title')])).toEqual([
      ['[1]', 'https://example.org/a', 'Page A'],
      ['[3]', 'https://example.org/c', 'Page "C" <c>'],
      ['[1]', 'https://example.org/a', 'Page A'],
    ]);
    expect(cites(html).every((a) => a.getAttribute('target') === '_blank' && a.getAttribute('rel') === 'noopener noreferrer nofollow')).toBe(true);
    expect(html.textContent.trim()).toBe('One [1], two [2], three [3][1], four [4].');
  });

  it('leave Markdown links, code and headings as they were', () => {
    const html = dom(renderMarkdown('# Report [1]\n\n[1](https://other.example) and `a[1]` and\n\n```\nx[1]\n```', sources));
    expect(html.querySelector('h1 a[data-citation]')?.textContent).toBe('[1]');
    const plain = [...html.querySelectorAll('a:not([data-citation])')];
    expect(plain.map((a) => [a.textContent, a.getAttribute('href')])).toEqual([['1', 'https://other.example']]);
    expect(html.querySelector('code a, pre a')).toBeNull();
  });

  it('are not looked for when the answer cites nothing', () => {
    expect(renderMarkdown('See [1].')).toBe(renderMarkdown('See [1].', [null, null]));
    expect(cites(dom(renderMarkdown('See [1].')))).toEqual([]);
  });
});
