/**
 * Answers are Markdown written by a model: parsed with `marked`, code blocks highlighted
 * with highlight.js (a handful of languages), and the HTML sanitised with DOMPurify before
 * it reaches the page. Raw HTML inside the Markdown is shown as text, never injected, and
 * images become plain links (no request to an address the model chose). An answer with
 * web sources cites them as `[1]`, `[2]`: each becomes a link to its source.
 *
 * Maths (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`) is taken out before Markdown could read it (a
 * backslash before a bracket is a Markdown escape) and typeset by KaTeX as MathML: the
 * site's policy (`style-src 'self'`) refuses the inline styles of KaTeX's HTML output, and
 * Chromium draws MathML by itself. A ```mermaid block is marked for the component to draw
 * (see `markdown-content.tsx`) once its closing fence has come.
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import plaintext from 'highlight.js/lib/languages/plaintext';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import katex from 'katex';
import { Marked, type TokenizerAndRendererExtension, type Tokens } from 'marked';

const LANGUAGES = {
  bash,
  c,
  cpp,
  css,
  diff,
  go,
  java,
  javascript,
  json,
  markdown,
  plaintext,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The first word of a fence's info string (```ts title="x" → ts), if highlight.js knows it. */
export function codeLanguage(info: string | undefined): string | null {
  const name = info?.trim().split(/\s+/)[0]?.toLowerCase();
  return name && hljs.getLanguage(name) ? name : null;
}

function highlight(code: string, info: string | undefined): { html: string; language: string | null } {
  const language = codeLanguage(info);
  if (!language) return { html: escapeHtml(code), language: null };
  try {
    return { html: hljs.highlight(code, { language, ignoreIllegals: true }).value, language };
  } catch {
    return { html: escapeHtml(code), language: null };
  }
}

/** What `[n]` in an answer links to: the nth source, when it is a web page with an http(s) address. */
export interface CitationTarget {
  href: string;
  title: string;
}

/** The targets of the answer being rendered (parsing is synchronous). */
let citationTargets: readonly (CitationTarget | null)[] = [];

interface CitationToken extends Tokens.Generic {
  type: 'citation';
  raw: string;
  number: number;
}

/**
 * `[n]` (not a link's `[n](…)`, not inside a link) → a link to the nth source. Only while
 * the answer has sources to cite: otherwise Markdown reads as it always did.
 */
const citation: TokenizerAndRendererExtension = {
  name: 'citation',
  level: 'inline',
  start(src: string) {
    if (citationTargets.length === 0) return undefined;
    return /\[\d/.exec(src)?.index;
  },
  tokenizer(src: string): CitationToken | undefined {
    if (citationTargets.length === 0 || this.lexer.state.inLink) return undefined;
    const match = /^\[(\d{1,3})\](?!\()/.exec(src);
    if (!match) return undefined;
    return { type: 'citation', raw: match[0], number: Number(match[1]) };
  },
  renderer(token) {
    const { raw, number } = token as CitationToken;
    const target = citationTargets[number - 1];
    if (!target) return escapeHtml(raw);
    const title = target.title ? ` title="${escapeHtml(target.title)}"` : '';
    return `<a href="${escapeHtml(target.href)}"${title} data-citation="${number}">${escapeHtml(raw)}</a>`;
  },
};

interface MathToken extends Tokens.Generic {
  type: 'inlineMath' | 'blockMath';
  raw: string;
  tex: string;
  display: boolean;
}

/**
 * A formula as MathML. A formula KaTeX cannot read shows its source in the error style
 * (`.katex-error`; KaTeX's own `style=` colour is removed by the sanitiser); `trust: false`
 * keeps `\href`, `\url`, `\includegraphics` and the like from making links or requests.
 */
function typeset(tex: string, display: boolean): string {
  const rendered = katex.renderToString(tex, {
    displayMode: display,
    output: 'mathml',
    throwOnError: false,
    trust: false,
    // Unicode text and other non-LaTeX input is accepted without a console warning.
    strict: false,
  });
  // The only `style=` KaTeX writes with MathML output is an error's colour (the stylesheet
  // colours `.katex-error`); even parsed by the sanitiser, it would break the page's policy.
  const html = rendered.replace(/ style="[^"]*"/g, '');
  // A display formula scrolls sideways on its own on a narrow screen.
  return display ? `<div class="math-display">${html}</div>` : html;
}

/**
 * Inline `$…$`: the usual rule that keeps prices as text ("costs $5 and $10"): no space
 * just inside either dollar, and no digit right after the closing one. `\$` is a dollar.
 */
const INLINE_DOLLAR = /^\$(?![\s$])((?:\\[\s\S]|[^\\$\n])+?)(?<!\s)\$(?!\d)/;
const INLINE_DISPLAY = /^\$\$([\s\S]+?)\$\$/;
const INLINE_PAREN = /^\\\(([\s\S]+?)\\\)/;
const INLINE_BRACKET = /^\\\[([\s\S]+?)\\\]/;

/** `$…$`, `\(…\)`, and `$$…$$` / `\[…\]` inside a line of text. */
const inlineMath: TokenizerAndRendererExtension = {
  name: 'inlineMath',
  level: 'inline',
  start(src: string) {
    return /\$|\\[([]/.exec(src)?.index;
  },
  tokenizer(src: string): MathToken | undefined {
    for (const [pattern, display] of [
      [INLINE_DISPLAY, true],
      [INLINE_BRACKET, true],
      [INLINE_PAREN, false],
      [INLINE_DOLLAR, false],
    ] as const) {
      const match = pattern.exec(src);
      const tex = match?.[1]?.trim();
      if (match && tex) return { type: 'inlineMath', raw: match[0], tex, display };
    }
    return undefined;
  },
  renderer(token) {
    const { tex, display } = token as MathToken;
    return typeset(tex, display);
  },
};

/**
 * A display formula that starts a block: `$$…$$` or `\[…\]` over one or more lines, read
 * whole, so that a line inside it that looks like Markdown (`- x`, `# y`, a blank line)
 * stays maths.
 */
const BLOCK_MATH = /^ {0,3}(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\])[^\S\n]*(?:\n+|$)/;

const blockMath: TokenizerAndRendererExtension = {
  name: 'blockMath',
  level: 'block',
  start(src: string) {
    return /^ {0,3}(?:\$\$|\\\[)/m.exec(src)?.index;
  },
  tokenizer(src: string): MathToken | undefined {
    const match = BLOCK_MATH.exec(src);
    const tex = (match?.[1] ?? match?.[2])?.trim();
    if (!match || !tex) return undefined;
    return { type: 'blockMath', raw: match[0], tex, display: true };
  },
  renderer(token) {
    return `${typeset((token as MathToken).tex, true)}\n`;
  },
};

/** A fence's closing line has come: `raw` ends with the fence it opened with. */
function fenceClosed(raw: string): boolean {
  const fence = /^ {0,3}(`{3,}|~{3,})/.exec(raw)?.[1];
  if (!fence) return false;
  const lines = raw.trimEnd().split('\n');
  const closing = new RegExp(`^ {0,3}${fence[0]}{${fence.length},}$`);
  return lines.length > 1 && closing.test(lines.at(-1) ?? '');
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    code({ text, lang, raw }: Tokens.Code) {
      const { html, language } = highlight(text.replace(/\n$/, ''), lang);
      const label = language ?? (lang?.trim().split(/\s+/)[0] || '');
      const attribute = label ? ` data-language="${escapeHtml(label)}"` : '';
      const className = language ? ` class="hljs language-${language}"` : ' class="hljs"';
      // The component adds the copy button to each block, and draws a finished diagram:
      // a fence still streaming in is not drawn on every delta.
      const diagram = label.toLowerCase() === 'mermaid' && fenceClosed(raw) ? ' data-mermaid=""' : '';
      return `<div class="code-block"${diagram}><pre${attribute}><code${className}>${html}</code></pre></div>\n`;
    },
    // Raw HTML from the model is shown as the text it is.
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    image({ href, text }: Tokens.Image) {
      const label = escapeHtml(text || href);
      return `<a href="${escapeHtml(href)}">${label}</a>`;
    },
  },
  extensions: [blockMath, inlineMath, citation],
});

/** The MathML that KaTeX writes (no `mglyph`: its `src` would be a request). */
const MATHML_TAGS = [
  'math', 'semantics', 'annotation', 'mrow', 'mi', 'mn', 'mo', 'ms', 'mtext', 'mspace', 'mpadded',
  'mphantom', 'mstyle', 'msup', 'msub', 'msubsup', 'mover', 'munder', 'munderover', 'mfrac', 'msqrt',
  'mroot', 'mtable', 'mtr', 'mtd', 'mlabeledtr', 'menclose', 'merror',
];
const MATHML_ATTR = [
  'display', 'displaystyle', 'encoding', 'mathvariant', 'mathcolor', 'mathbackground', 'mathsize',
  'stretchy', 'fence', 'separator', 'lspace', 'rspace', 'minsize', 'maxsize', 'largeop', 'movablelimits',
  'symmetric', 'accent', 'accentunder', 'linethickness', 'columnalign', 'columnlines', 'columnspacing',
  'rowalign', 'rowlines', 'rowspacing', 'width', 'height', 'depth', 'voffset', 'scriptlevel', 'notation',
  'linebreak',
];

const ALLOWED_TAGS = [
  'a', 'b', 'blockquote', 'br', 'code', 'del', 'div', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i',
  'input', 'li', 'ol', 'p', 'pre', 'span', 's', 'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'th',
  'thead', 'tr', 'ul',
  ...MATHML_TAGS,
];
const ALLOWED_ATTR = [
  'href', 'title', 'class', 'data-language', 'align', 'start', 'type', 'checked', 'disabled',
  ...MATHML_ATTR,
];

let purifier: ReturnType<typeof DOMPurify> | null = null;

function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier;
  purifier = DOMPurify(window);
  purifier.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      // Links open apart from the chat and tell the other site nothing.
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    }
    if (node.tagName === 'PRE') {
      // A long line scrolls the block sideways: a keyboard must reach it to scroll too.
      node.setAttribute('tabindex', '0');
    }
    if (node.tagName === 'INPUT') {
      // Only GFM task-list checkboxes, which are read-only.
      if (node.getAttribute('type') !== 'checkbox') node.remove();
      else node.setAttribute('disabled', '');
    }
  });
  return purifier;
}

/**
 * Markdown to sanitised HTML, safe for `dangerouslySetInnerHTML`. `citations[n - 1]` is
 * where `[n]` links (null: left as text).
 */
export function renderMarkdown(source: string, citations: readonly (CitationTarget | null)[] = []): string {
  if (!source) return '';
  citationTargets = citations.some(Boolean) ? citations : [];
  let html: string;
  try {
    html = marked.parse(source, { async: false });
  } finally {
    citationTargets = [];
  }
  return getPurifier().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ADD_ATTR: ['target', 'rel'],
    ALLOW_DATA_ATTR: true,
    // The narrow URI rule below is applied to every attribute not known as URI-safe, and
    // would drop `display="block"` or `mathvariant="bold"`: MathML's are plain words.
    ADD_URI_SAFE_ATTR: MATHML_ATTR,
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  });
}
