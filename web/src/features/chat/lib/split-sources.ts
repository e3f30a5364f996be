import type { DocumentSource, Source, WebSource } from '@/types/generated';
import { isDocumentSource, isWebSource, webSourceHref } from './files';
import type { CitationTarget } from './markdown';

/** A web source with its citation number: its place in `message.sources`, from 1. */
export interface NumberedWebSource {
  number: number;
  source: WebSource;
}

/**
 * An answer's sources split for showing (in the chat and on a shared page): documents as
 * before, web pages numbered, and what `[n]` links to.
 */
export function splitSources(sources: readonly Source[]) {
  const documents: DocumentSource[] = [];
  const web: NumberedWebSource[] = [];
  const citations: (CitationTarget | null)[] = [];
  sources.forEach((source, index) => {
    if (isDocumentSource(source)) {
      documents.push(source);
      citations.push(null);
    } else if (isWebSource(source)) {
      web.push({ number: index + 1, source });
      const href = webSourceHref(source);
      citations.push(href ? { href, title: source.title || source.site } : null);
    }
  });
  return { documents, web, citations };
}
