import { memo, useDeferredValue, useEffect, useLayoutEffect, useMemo, useRef, type MouseEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { renderMarkdown, type CitationTarget } from '../lib/markdown';
import { drawDiagram, drawnDiagram, type DiagramResult } from '../lib/mermaid-diagram';
import styles from './markdown.module.css';

const NO_CITATIONS: readonly (CitationTarget | null)[] = [];

/** How long the text must be still before a new diagram is drawn (not on every delta). */
const DIAGRAM_DELAY_MS = 400;
/** How long a copy button says "Copied". */
const COPIED_MS = 2000;

/** The theme the page shows now (`<html data-theme>`, `auto` following the system). */
function darkTheme(): boolean {
  const theme = document.documentElement.dataset.theme;
  if (theme === 'dark') return true;
  if (theme === 'light') return false;
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;
}

const codeOf = (block: Element) => block.querySelector('pre code')?.textContent ?? '';

/**
 * Gives a code block its copy button, or relabels it in the current language. The labels
 * are set here (the HTML is made without i18n); a click is handled by the container.
 */
function ensureCopyButton(block: HTMLElement, t: TFunction<'chat'>) {
  let button = block.querySelector<HTMLButtonElement>(':scope > button[data-copy]');
  if (!button) {
    button = document.createElement('button');
    button.type = 'button';
    button.className = styles.copyButton!;
    button.dataset.copy = '';
    const status = document.createElement('span');
    status.className = 'visually-hidden';
    status.setAttribute('role', 'status');
    block.prepend(button, status);
  }
  const state = button.dataset.copy;
  button.textContent = state === 'done' ? t('markdown.copied') : state === 'failed' ? t('markdown.copyFailed') : t('markdown.copy');
  // The visible word is part of the name (label in name), and says what is copied.
  button.setAttribute('aria-label', state === 'done' ? t('markdown.copied') : t('markdown.copyCode'));
}

/** Shows a drawn diagram in place of its source, or the source with a short error line. */
function showDiagram(block: HTMLElement, result: DiagramResult, t: TFunction<'chat'>) {
  block.querySelector(`.${styles.diagram}, .${styles.diagramError}`)?.remove();
  const pre = block.querySelector('pre');
  if (result.ok) {
    const frame = document.createElement('div');
    frame.className = styles.diagram!;
    frame.style.setProperty('--diagram-width', `${result.width}px`);
    const image = document.createElement('img');
    image.src = result.src;
    image.width = result.width;
    image.height = result.height;
    image.alt = t('markdown.diagram');
    image.decoding = 'async';
    // An SVG the browser cannot read as an image: the source, as for a broken diagram.
    image.addEventListener('error', () => showDiagram(block, { ok: false, message: 'The SVG did not load' }, t), { once: true });
    frame.append(image);
    pre?.before(frame);
    if (pre) pre.hidden = true;
    block.dataset.mermaid = 'drawn';
  } else {
    const error = document.createElement('p');
    error.className = styles.diagramError!;
    error.textContent = t('markdown.diagramError');
    error.title = result.message;
    pre?.after(error);
    if (pre) pre.hidden = false;
    block.dataset.mermaid = 'error';
  }
}

/**
 * An answer's Markdown as sanitised HTML. While it streams, rendering may lag a frame
 * behind the deltas (useDeferredValue) so typing and scrolling stay smooth. `citations`
 * are where the answer's `[n]` link (its web sources, in citation order).
 *
 * Each code block gets a copy button, and a finished ```mermaid block is drawn once the
 * text has been still for a moment (a diagram already drawn is shown again at once).
 * The HTML is React's to replace on every change, so both are added to it after each one.
 */
export const MarkdownContent = memo(function MarkdownContent({
  source,
  citations = NO_CITATIONS,
}: {
  source: string;
  citations?: readonly (CitationTarget | null)[];
}) {
  const { t } = useTranslation('chat');
  const deferred = useDeferredValue(source);
  const html = useMemo(() => renderMarkdown(deferred, citations), [deferred, citations]);
  const container = useRef<HTMLDivElement>(null);
  const copiedTimers = useRef(new WeakMap<HTMLButtonElement, number>());

  // Before the paint: the buttons and the diagrams drawn before, so nothing flickers.
  useLayoutEffect(() => {
    const root = container.current;
    if (!root) return;
    const dark = darkTheme();
    for (const block of root.querySelectorAll<HTMLElement>('.code-block')) {
      ensureCopyButton(block, t);
      if (block.dataset.mermaid === '') {
        const done = drawnDiagram(codeOf(block), dark);
        if (done) showDiagram(block, done, t);
      }
    }
  }, [html, t]);

  useEffect(() => {
    const root = container.current;
    if (!root?.querySelector('[data-mermaid=""]')) return;
    let current = true;
    const timer = window.setTimeout(() => {
      const dark = darkTheme();
      for (const block of root.querySelectorAll<HTMLElement>('[data-mermaid=""]')) {
        block.dataset.mermaid = 'drawing';
        drawDiagram(codeOf(block), dark).then(
          (result) => {
            if (current) showDiagram(block, result, t);
          },
          () => {
            // Mermaid could not be loaded: the source stays, and a later render tries again.
            if (current) block.dataset.mermaid = '';
          },
        );
      }
    }, DIAGRAM_DELAY_MS);
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
  }, [html, t]);

  const onClick = (event: MouseEvent<HTMLDivElement>) => {
    const button = (event.target as Element).closest<HTMLButtonElement>('button[data-copy]');
    const block = button?.closest<HTMLElement>('.code-block');
    if (!button || !block) return;
    const status = button.nextElementSibling;
    const settle = (state: 'done' | 'failed') => {
      button.dataset.copy = state;
      ensureCopyButton(block, t);
      if (status) status.textContent = state === 'done' ? t('markdown.copiedStatus') : t('markdown.copyFailed');
      window.clearTimeout(copiedTimers.current.get(button));
      copiedTimers.current.set(
        button,
        window.setTimeout(() => {
          button.dataset.copy = '';
          ensureCopyButton(block, t);
          if (status) status.textContent = '';
        }, COPIED_MS),
      );
    };
    // No clipboard outside a secure context (plain http on another host than localhost).
    if (!('clipboard' in navigator)) settle('failed');
    else navigator.clipboard.writeText(codeOf(block)).then(() => settle('done'), () => settle('failed'));
  };

  // renderMarkdown escapes raw HTML and sanitises the result with DOMPurify. The clicks
  // are the copy buttons' (real buttons, reached and pressed from the keyboard too).
  return <div ref={container} className={styles.markdown} onClick={onClick} dangerouslySetInnerHTML={{ __html: html }} />;
});
