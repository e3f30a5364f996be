/** How components and the send read the composer's files. */
import { EMPTY, type ComposerAttachment, type SentAttachment } from './state';
import type { AttachmentState } from './types';

/** Not ready yet, nor failed: a send waits for it (the server refuses a document being read). */
export function isBusy(item: ComposerAttachment): boolean {
  return item.status === 'preparing' || item.status === 'uploading' || item.status === 'processing';
}

/** The uploaded (and, for documents, read) files a send carries, in the order they were picked. */
export function sendable(items: readonly ComposerAttachment[]): SentAttachment[] {
  return items.flatMap((item) => (item.status === 'ready' && item.file ? [{ file: item.file, previewUrl: item.previewUrl }] : []));
}

/** A composer's files; the same empty array while it has none, so selectors stay stable. */
export const selectAttachments =
  (key: string) =>
  (state: AttachmentState): ComposerAttachment[] =>
    state.items[key] ?? EMPTY;
