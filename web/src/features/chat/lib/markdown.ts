/**
 * Answers are Markdown written by a model: parsed with `marked`, code blocks highlighted
 * with highlight.js (a handful of languages), and the HTML sanitised with DOMPurify before
 * it reaches the page. Raw HTML inside the Markdown is shown as text, never injected, and
 * images become plain links (no request to an address the model chose). An answer with
 * web sources cites them as `[1]`, `[2]`: each becomes a link to its source.
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

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    code({ text, lang }: Tokens.Code) {
      const { html, language } = highlight(text.replace(/\n$/, ''), lang);
      const label = language ?? (lang?.trim().split(/\s+/)[0] || '');
      const attribute = label ? ` data-language="${escapeHtml(label)}"` : '';
      const className = language ? ` class="hljs language-${language}"` : ' class="hljs"';
      return `<pre${attribute}><code${className}>${html}</code></pre>\n`;
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
  extensions: [citation],
});

const ALLOWED_TAGS = [
  'a', 'b', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i',
  'input', 'li', 'ol', 'p', 'pre', 'span', 's', 'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'th',
  'thead', 'tr', 'ul',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'data-language', 'align', 'start', 'type', 'checked', 'disabled'];

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
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  });
}
