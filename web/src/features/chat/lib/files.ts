/**
 * Attachments that are not images: which picked files are documents, how a document's
 * processing state is merged from its upload answer and its `file.updated` frames, and how
 * files and sources are shown. The server tells what a file is from its content; the
 * client only routes by name and type.
 */
import type { Attachment, DocumentSource, Source, WebSource } from '@/types/generated';

/** What the server takes as documents (docs/api.md `POST /api/files`). */
const DOCUMENT_EXTENSIONS = new Set(['pdf', 'docx', 'txt', 'md', 'markdown', 'csv']);
const DOCUMENT_TYPES = new Set([
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'text/plain',
  'text/markdown',
  'text/x-markdown',
  'text/csv',
]);

/** The document picker: the extensions first (the types vary by system: a CSV may be `application/vnd.ms-excel`). */
export const DOCUMENT_ACCEPT = ['.pdf', '.docx', '.txt', '.md', '.csv', ...DOCUMENT_TYPES].join(',');

function extension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot + 1).toLowerCase();
}

/** Whether a picked, dropped or pasted file goes up as a document: by its name, else its type. */
export function isDocument(file: Pick<File, 'name' | 'type'>): boolean {
  return DOCUMENT_EXTENSIONS.has(extension(file.name)) || DOCUMENT_TYPES.has(file.type.toLowerCase());
}

/**
 * How far along a file is: processing counts up with its progress, an end (ready or
 * failed) beats any progress. Frames and the upload's answer race, so the copy that is
 * further along wins whichever arrives last.
 */
function stage(file: Pick<Attachment, 'status' | 'progress'>): number {
  return file.status === 'processing' ? file.progress : 1000;
}

/** The newer of two copies of one file (`b` on a tie: it arrived later). */
export function newerFile(a: Attachment, b: Attachment): Attachment {
  return stage(a) > stage(b) ? a : b;
}

export function isDocumentSource(source: Source): source is DocumentSource {
  return 'fileId' in source;
}

export function isWebSource(source: Source): source is WebSource {
  return 'url' in source;
}

/** Where a source opens: the file, at its page for a PDF (browsers' viewers read `#page=`). */
export function sourceHref(source: DocumentSource): string {
  const url = `/api/files/${encodeURIComponent(source.fileId)}`;
  return source.page !== null && extension(source.name) === 'pdf' ? `${url}#page=${source.page}` : url;
}

/** A web source's address when it may be a link: `http:` and `https:` only, else null. */
export function webSourceHref(source: WebSource): string | null {
  try {
    const url = new URL(source.url);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** A file size for people: "0.5 kB", "34 kB", "1.2 MB", in the interface's language. */
export function formatFileSize(bytes: number, locale: string): string {
  const mb = bytes >= 1024 * 1024;
  // Below a kilobyte in tenths ("512 byte" reads oddly in English), never "0 kB".
  const value = Math.max(0.1, bytes / (mb ? 1024 * 1024 : 1024));
  return new Intl.NumberFormat(locale, {
    style: 'unit',
    unit: mb ? 'megabyte' : 'kilobyte',
    unitDisplay: 'short',
    maximumFractionDigits: value < 10 ? 1 : 0,
  }).format(value);
}
