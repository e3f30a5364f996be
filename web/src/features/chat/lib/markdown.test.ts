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

describe('maths', () => {
  const maths = (html: HTMLElement) => [...html.querySelectorAll('math')];

  it('typesets \\(…\\), $…$, $$…$$ and \\[…\\] as MathML, keeping the backslashes from Markdown', () => {
    const html = dom(renderMarkdown('Pythagoras: \\(a^2+b^2=c^2\\), Einstein: $E=mc^2$.\n\n$$\\int_0^1 x\\,dx$$\n\n\\[\\frac{a}{b}\\]'));
    const [inline, dollar, integral, fraction] = maths(html);
    expect(maths(html)).toHaveLength(4);
    expect(inline?.querySelector('annotation')?.textContent).toBe('a^2+b^2=c^2');
    expect(inline?.querySelectorAll('msup')).toHaveLength(3);
    expect(inline?.getAttribute('display')).toBeNull();
    expect(dollar?.querySelector('annotation')?.textContent).toBe('E=mc^2');
    expect(integral?.getAttribute('display')).toBe('block');
    expect(integral?.querySelector('mo')?.textContent).toBe('∫');
    expect(fraction?.querySelector('mfrac')).not.toBeNull();
    expect(html.querySelectorAll('.math-display')).toHaveLength(2);
  });

  it('produces <math for the two formulas of the brief', () => {
    expect(renderMarkdown('\\(a^2+b^2=c^2\\)')).toContain('<math');
    expect(renderMarkdown('$$\\int$$')).toContain('<math');
  });

  it('keeps a display formula whole even when its lines look like Markdown', () => {
    const html = dom(renderMarkdown('$$\na\n\n- b\n$$\n\nafter'));
    expect(html.querySelector('ul')).toBeNull();
    expect(html.querySelector('.math-display')).not.toBeNull();
    expect(html.querySelector('p')?.textContent).toBe('after');
  });

  it('leaves prices and escaped dollars as text', () => {
    for (const text of ['It costs $5 and $10.', 'From $ 5 to $ 10', 'Pay $5, get $10 back', 'a \\$x\\$ b', 'between $x$5']) {
      const html = dom(renderMarkdown(text));
      expect(maths(html), text).toEqual([]);
    }
    expect(dom(renderMarkdown('It costs $5 and $10.')).textContent.trim()).toBe('It costs $5 and $10.');
  });

  it('does not look for maths inside code', () => {
    const html = dom(renderMarkdown('Inline `$x^2$` and `\\(y\\)`.\n\n```\n$$\\int$$ and \\[z\\]\n```\n\n    $$indented$$'));
    expect(maths(html)).toEqual([]);
    expect([...html.querySelectorAll('code')].map((code) => code.textContent)).toEqual([
      '$x^2$',
      '\\(y\\)',
      '$$\\int$$ and \\[z\\]',
      '$$indented$$',
    ]);
  });

  it('shows a formula it cannot read as its source, in the error style, with no inline style', () => {
    const html = dom(renderMarkdown('Broken: $\\frac{1}{$ here'));
    const error = html.querySelector('.katex-error');
    expect(error?.textContent).toBe('\\frac{1}{');
    expect(error?.hasAttribute('style')).toBe(false);
    expect(html.querySelector('[style]')).toBeNull();
  });

  it('makes no link or request from a formula (trust is off)', () => {
    const html = dom(renderMarkdown('$\\href{javascript:alert(1)}{x}$ $\\url{https://example.com}$ $\\includegraphics{https://example.com/a.png}$'));
    expect(html.querySelector('a, img, [href], [src]')).toBeNull();
  });
});

describe('mermaid blocks', () => {
  it('are marked for drawing once their fence is closed, not while they stream in', () => {
    const closed = dom(renderMarkdown('```mermaid\nflowchart LR\n  A --> B\n```'));
    expect(closed.querySelector('.code-block')?.getAttribute('data-mermaid')).toBe('');
    expect(closed.querySelector('pre[data-language="mermaid"] code')?.textContent).toBe('flowchart LR\n  A --> B');
    const open = dom(renderMarkdown('```mermaid\nflowchart LR\n  A --> B'));
    expect(open.querySelector('[data-mermaid]')).toBeNull();
    expect(open.querySelector('pre code')?.textContent).toContain('A --> B');
  });

  it('are no way in for scripts, handlers or script links', () => {
    const html = dom(
      renderMarkdown(
        [
          '```mermaid',
          'flowchart LR',
          '  A["<img src=x onerror=alert(1)>"] --> B["<script>alert(2)</script>"]',
          '  click A "javascript:alert(3)"',
          '```',
          '',
          '<script>alert(4)</script> <img src=x onerror="alert(5)"> [go](javascript:alert(6))',
          '',
          '$x$ <svg onload=alert(7)>',
        ].join('\n'),
      ),
    );
    expect(html.querySelector('script, img, svg, iframe')).toBeNull();
    for (const element of html.querySelectorAll('*')) {
      expect([...element.attributes].map((a) => a.name).filter((name) => name.startsWith('on'))).toEqual([]);
      expect(element.getAttribute('href') ?? '').not.toMatch(/^javascript:/i);
    }
    // The diagram's source is there as text, to be drawn (as an image) or shown.
    expect(html.querySelector('[data-mermaid] code')?.textContent).toContain('<script>alert(2)</script>');
    expect(html.querySelector('math')).not.toBeNull();
  });
});

describe('code blocks', () => {
  it('each sit in a block for the copy button, their language apart from their code', () => {
    const html = dom(renderMarkdown('```js\nconst a = 1;\n```\n\n```\nplain\n```'));
    const blocks = [...html.querySelectorAll('.code-block')];
    expect(blocks).toHaveLength(2);
    expect(blocks[0]?.querySelector('pre')?.getAttribute('data-language')).toBe('js');
    expect(blocks[0]?.querySelector('code')?.textContent).toBe('const a = 1;');
  });

  it('can be scrolled sideways from the keyboard: each is a tab stop (axe scrollable-region-focusable)', () => {
    const html = dom(renderMarkdown('```rust\nfn main() { println!("a long line that runs past a phone"); }\n```'));
    expect(html.querySelector('pre')?.getAttribute('tabindex')).toBe('0');
    // A model cannot add one anywhere else.
    expect(dom(renderMarkdown('<p tabindex="0">x</p> [a](https://example.org)')).querySelector('[tabindex]')).toBeNull();
  });
});

describe('maths and diagrams do not let anything else in', () => {
  it('still removes scripts, handlers and script links around them', () => {
    const html = dom(
      renderMarkdown(
        'Formula $a<b$ and <script>alert(1)</script> and <img src=x onerror="alert(1)"> \\(x\\) [x](javascript:alert(1))\n\n$$\\text{<img src=x onerror=alert(1)>}$$',
      ),
    );
    expect(html.querySelector('script, img')).toBeNull();
    expect([...html.querySelectorAll('a')].some((a) => (a.getAttribute('href') ?? '').startsWith('javascript'))).toBe(false);
    for (const element of html.querySelectorAll('*')) {
      expect([...element.attributes].map((a) => a.name).filter((name) => name.startsWith('on'))).toEqual([]);
    }
    expect(html.querySelectorAll('math').length).toBeGreaterThanOrEqual(2);
  });
});
