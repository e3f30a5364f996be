import { memo, useDeferredValue, useMemo } from 'react';
import { renderMarkdown } from '../lib/markdown';
import styles from './markdown.module.css';

/**
 * An answer's Markdown as sanitised HTML. While it streams, rendering may lag a frame
 * behind the deltas (useDeferredValue) so typing and scrolling stay smooth.
 */
export const MarkdownContent = memo(function MarkdownContent({ source }: { source: string }) {
  const deferred = useDeferredValue(source);
  const html = useMemo(() => renderMarkdown(deferred), [deferred]);
  // renderMarkdown escapes raw HTML and sanitises the result with DOMPurify.
  return <div className={styles.markdown} dangerouslySetInnerHTML={{ __html: html }} />;
});
