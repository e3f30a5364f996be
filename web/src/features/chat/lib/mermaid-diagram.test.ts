import { describe, expect, it } from 'vitest';
import { asImage } from './mermaid-diagram';

describe('a drawn diagram as an image', () => {
  const drawn =
    '<svg id="d1" width="100%" xmlns="http://www.w3.org/2000/svg" class="flowchart" data-chat-style="max-width: 320.5px;" viewBox="0 0 320.5 99.2">' +
    '<g><rect data-chat-style="fill: red" width="10" height="10"></rect><text>A&nbsp;&amp;&nbsp;B</text></g></svg>';

  it('is well-formed SVG at its own size, its styles back in', () => {
    const { src, width, height } = asImage(drawn, ['#d1 .node > rect { fill: #eee; }']);
    expect([width, height]).toEqual([321, 100]);
    expect(src.startsWith('data:image/svg+xml;charset=utf-8,')).toBe(true);
    const xml = decodeURIComponent(src.slice(src.indexOf(',') + 1));
    const doc = new DOMParser().parseFromString(xml, 'image/svg+xml');
    expect(doc.querySelector('parsererror')).toBeNull();
    const root = doc.documentElement;
    expect(root.getAttribute('width')).toBe('321');
    expect(root.getAttribute('height')).toBe('100');
    expect(root.hasAttribute('style')).toBe(false);
    expect(root.firstElementChild?.tagName).toBe('style');
    expect(root.firstElementChild?.textContent).toBe('#d1 .node > rect { fill: #eee; }');
    expect(doc.querySelector('rect')?.getAttribute('style')).toBe('fill: red');
    expect(xml).not.toContain('data-chat-style');
    expect(doc.querySelector('text')?.textContent).toBe('A\u00a0&\u00a0B');
  });

  it('refuses what is no drawing', () => {
    expect(() => asImage('<div></div>', [])).toThrow();
    expect(() => asImage('<svg viewBox="0 0 0 0"></svg>', [])).toThrow();
  });
});
