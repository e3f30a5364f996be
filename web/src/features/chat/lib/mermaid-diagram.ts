/**
 * A ```mermaid block of an answer drawn as a picture. Mermaid is large, so it is loaded
 * (its own chunks) the first time an answer has a finished diagram, never before.
 *
 * The site's policy is `style-src 'self'`: Mermaid writes `style="…"` attributes and a
 * `<style>` element into the page while it lays a diagram out, which Chromium would refuse
 * (and report). So, while Mermaid draws, a style attribute goes through the CSSOM (which
 * the policy allows) and its `<style>` is applied as a constructed stylesheet instead of
 * being inserted; the finished SVG, its `<style>` put back, is shown as an
 * `<img src="data:image/svg+xml,…">`, where its styles apply and no script can run.
 */
import type { Mermaid } from 'mermaid';

export type DiagramResult =
  | { ok: true; src: string; width: number; height: number }
  | { ok: false; message: string };

let loading: Promise<Mermaid> | null = null;

function loadMermaid(): Promise<Mermaid> {
  loading ??= import('mermaid').then(
    (module) => module.default,
    (error: unknown) => {
      // A chunk that failed to load (offline for a moment) is tried again next time.
      loading = null;
      throw error;
    },
  );
  return loading;
}

/** Results by theme and source: a diagram is drawn once, then shown at once on each render. */
const drawn = new Map<string, DiagramResult>();
const drawing = new Map<string, Promise<DiagramResult>>();
const KEEP = 64;
/** Mermaid keeps one configuration and lays out in the page: one diagram at a time. */
let queue: Promise<unknown> = Promise.resolve();
let counter = 0;

const keyOf = (source: string, dark: boolean) => `${dark ? 'dark' : 'light'}\n${source}`;

/** The diagram already drawn for `source`, if any (synchronous, for the first paint). */
export function drawnDiagram(source: string, dark: boolean): DiagramResult | undefined {
  return drawn.get(keyOf(source, dark));
}

/** Draws `source` (in the dark or light theme), or answers why it cannot be drawn. */
export function drawDiagram(source: string, dark: boolean): Promise<DiagramResult> {
  const key = keyOf(source, dark);
  const done = drawn.get(key);
  if (done) return Promise.resolve(done);
  let pending = drawing.get(key);
  if (!pending) {
    pending = queue.then(() => draw(source, dark));
    queue = pending.catch(() => undefined);
    drawing.set(key, pending);
    void pending
      .then((result) => {
        drawn.set(key, result);
        if (drawn.size > KEEP) drawn.delete(drawn.keys().next().value!);
      }, () => undefined)
      .finally(() => drawing.delete(key));
  }
  return pending;
}

async function draw(source: string, dark: boolean): Promise<DiagramResult> {
  // Not caught: a failed load is not a broken diagram, and is not remembered as one.
  const mermaid = await loadMermaid();
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: 'strict',
    theme: dark ? 'dark' : 'default',
    // Labels as SVG text, not HTML in <foreignObject>: they need no inline styles.
    htmlLabels: false,
    flowchart: { htmlLabels: false },
    // A broken diagram throws instead of drawing Mermaid's own error picture.
    suppressErrorRendering: true,
  });
  try {
    await mermaid.parse(source);
    counter += 1;
    const id = `chat-diagram-${counter}`;
    const { svg, rules } = await withoutInlineStyles(id, () => mermaid.render(id, source));
    return { ok: true, ...asImage(svg, rules) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The attribute that holds a style while Mermaid's SVG is serialised and sanitised: that
 * SVG is parsed again (by DOMPurify, in a document that has the page's policy), where a
 * `style="…"` would be refused and reported; it is renamed back in the image's text.
 */
const STYLE_HELD = 'data-chat-style';

/**
 * Runs Mermaid's `render` with its inline styles kept from the policy: `setAttribute('style')`
 * goes through `element.style.cssText`, and the `<style>` it adds to its SVG is not inserted
 * but adopted as a constructed stylesheet while it lays out (the text is measured with its
 * fonts), and handed back to be put into the finished image. When Mermaid reads the drawn
 * SVG's markup, its style attributes are handed over as `data-chat-style`.
 */
async function withoutInlineStyles(
  id: string,
  render: () => Promise<{ svg: string }>,
): Promise<{ svg: string; rules: string[] }> {
  const element = Element.prototype;
  const node = Node.prototype;
  // The page's own methods, called with the element they were called on and put back after.
  /* eslint-disable @typescript-eslint/unbound-method */
  const { setAttribute, setAttributeNS } = element;
  const { insertBefore, appendChild } = node;
  /* eslint-enable @typescript-eslint/unbound-method */
  const innerHtml = Object.getOwnPropertyDescriptor(element, 'innerHTML');
  const rules: string[] = [];
  const sheets: CSSStyleSheet[] = [];
  const adopt = (style: HTMLStyleElement | SVGStyleElement) => {
    const text = style.textContent ?? '';
    rules.push(text);
    if (typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(text);
      sheets.push(sheet);
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    }
  };
  const isStyleElement = (child: Node): child is HTMLStyleElement | SVGStyleElement =>
    child instanceof HTMLStyleElement || child instanceof SVGStyleElement;
  const styled = (target: Element): target is HTMLElement | SVGElement =>
    target instanceof HTMLElement || target instanceof SVGElement;

  element.setAttribute = function (this: Element, name: string, value: string) {
    if (name.toLowerCase() === 'style' && styled(this)) this.style.cssText = String(value);
    else setAttribute.call(this, name, value);
  };
  element.setAttributeNS = function (this: Element, namespace: string | null, name: string, value: string) {
    if (!namespace && name.toLowerCase() === 'style' && styled(this)) this.style.cssText = String(value);
    else setAttributeNS.call(this, namespace, name, value);
  };
  node.insertBefore = function <T extends Node>(this: Node, child: T, reference: Node | null): T {
    if (isStyleElement(child) && this instanceof SVGElement) {
      adopt(child);
      return child;
    }
    return insertBefore.call(this, child, reference) as T;
  };
  node.appendChild = function <T extends Node>(this: Node, child: T): T {
    if (isStyleElement(child) && this instanceof SVGElement) {
      adopt(child);
      return child;
    }
    return appendChild.call(this, child) as T;
  };
  if (innerHtml?.get && innerHtml.set) {
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const { get, set } = innerHtml;
    Object.defineProperty(element, 'innerHTML', {
      ...innerHtml,
      get(this: Element) {
        // Mermaid's own box around the drawn SVG (`d` + the diagram's id), read to serialise it.
        if (this.id === `d${id}`) {
          for (const held of this.querySelectorAll('[style]')) {
            setAttribute.call(held, STYLE_HELD, held.getAttribute('style') ?? '');
            held.removeAttribute('style');
          }
        }
        return get.call(this) as string;
      },
      set(this: Element, value: string) {
        set.call(this, value);
      },
    });
  }
  try {
    const { svg } = await render();
    return { svg, rules };
  } finally {
    element.setAttribute = setAttribute;
    element.setAttributeNS = setAttributeNS;
    node.insertBefore = insertBefore;
    node.appendChild = appendChild;
    if (innerHtml) Object.defineProperty(element, 'innerHTML', innerHtml);
    if (sheets.length > 0) document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => !sheets.includes(s));
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * Mermaid's SVG (HTML-serialised markup) as an image: well-formed XML, its `<style>` back
 * in, its style attributes back, and its size from its viewBox (Mermaid sizes it
 * `width="100%"` for a page, which an image has not), so that it is drawn at its own size
 * and a wide one scrolls rather than shrinks to nothing on a phone. Worked on as text: a
 * parse in this page would be under its policy, and refuse the styles.
 */
export function asImage(svg: string, rules: readonly string[]): { src: string; width: number; height: number } {
  const open = /<svg\b[^>]*>/.exec(svg);
  if (!open) throw new Error('Mermaid drew no SVG');
  const attributes = new Map<string, string>();
  for (const [, name, value] of open[0].matchAll(/\s([\w:-]+)="([^"]*)"/g)) attributes.set(name!, value!);
  const box = (attributes.get('viewBox') ?? '').trim().split(/[\s,]+/).map(Number);
  const width = Math.ceil(box[2] ?? 0);
  const height = Math.ceil(box[3] ?? 0);
  if (!(width > 0 && height > 0)) throw new Error('Mermaid drew an empty diagram');
  for (const name of ['style', STYLE_HELD, 'width', 'height']) attributes.delete(name);
  attributes.set('xmlns', SVG_NS);
  attributes.set('width', String(width));
  attributes.set('height', String(height));
  const body = svg.slice(open.index + open[0].length);
  if (body.includes('xlink:')) attributes.set('xmlns:xlink', 'http://www.w3.org/1999/xlink');
  const tag = `<svg${[...attributes].map(([name, value]) => ` ${name}="${value}"`).join('')}>`;
  const styles = rules.map((text) => `<style><![CDATA[${text.replaceAll(']]>', '')}]]></style>`).join('');
  const xml = `${tag}${styles}${body}`
    .replaceAll(`${STYLE_HELD}="`, 'style="')
    // The one named entity an HTML serialiser writes that XML does not know.
    .replaceAll('&nbsp;', '&#160;');
  return { src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(xml)}`, width, height };
}
