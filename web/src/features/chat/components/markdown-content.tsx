import { memo, useDeferredValue, useMemo } from 'react';
import { renderMarkdown, type CitationTarget } from '../lib/markdown';
import styles from './markdown.module.css';

const NO_CITATIONS: readonly (CitationTarget | null)[] = [];

/**
 * An answer's Markdown as sanitised HTML. While it streams, rendering may lag a frame
 * behind the deltas (useDeferredValue) so typing and scrolling stay smooth. `citations`
 * are where the answer's `[n]` link (its web sources, in citation order).
 */
export const MarkdownContent = memo(function MarkdownContent({
  source,
  citations = NO_CITATIONS,
}: {
  source: string;
  citations?: readonly (CitationTarget | null)[];
}) {
  const deferred = useDeferredValue(source);
  const html = useMemo(() => renderMarkdown(deferred, citations), [deferred, citations]);
  // renderMarkdown escapes raw HTML and sanitises the result with DOMPurify.
  return <div className={styles.markdown} dangerouslySetInnerHTML={{ __html: html }} />;
});
