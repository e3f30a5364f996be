/**
 * The files attached in a composer (keyed like drafts: a conversation id, or NEW_CHAT),
 * from the pick to the send. Each picked image is prepared (lib/image-prep.ts) and
 * uploaded at once (`POST /api/files`), so that sending only names the uploaded ids; its
 * preview shows the state meanwhile. A document goes up as it was picked, then the server
 * reads it (`processing`) and tells its progress and end in `file.updated` frames (after a
 * reconnect, which may have missed some, its state is asked for once); it can be sent once
 * it is ready. A send hands the uploaded ones over to the pending message
 * (their previews show there until the server's message arrives); a refused send gives
 * them back.
 *
 * The state is here; what changes it: actions.ts (the composer), frames.ts (`file.updated`
 * and a reconnect), the uploads themselves (uploads.ts).
 */
import type { Attachment, FileKind } from '@/types/generated';

/** `processing`: a document uploaded and being read by the server (its `file.progress`). */
export type AttachmentStatus = 'preparing' | 'uploading' | 'processing' | 'ready' | 'error';

/**
 * Why a file could not be attached: `upload` carries the server's message (localized);
 * `unreadable` is a document the server failed to read; `tooLarge` a document over the
 * plan's `documentMaxMb`, refused before uploading it.
 */
export type AttachmentError =
  | { kind: 'heic' }
  | { kind: 'optimize' }
  | { kind: 'upload'; message: string | null }
  | { kind: 'unreadable' }
  | { kind: 'tooLarge'; max: number };

export interface ComposerAttachment {
  localId: string;
  kind: FileKind;
  name: string;
  /** The picked file's size; the server's once uploaded. */
  size: number;
  /** An object URL of the picked (or converted) image; null while a HEIC converts, if it failed, and for documents. */
  previewUrl: string | null;
  status: AttachmentStatus;
  /** The server's file, once uploaded; a document's is kept up to date by `file.updated`. */
  file: Attachment | null;
  error: AttachmentError | null;
}

/** An uploaded file going along with a send: its id to send, its preview to show meanwhile. */
export interface SentAttachment {
  file: Attachment;
  previewUrl: string | null;
}

/**
 * Picked files that were not taken. `tooMany` and `tooManyDocuments` use the same words
 * as the server's `too_many_images` and `too_many_documents`; `unsupported` names what
 * can be attached (images, and documents when the plan takes them).
 */
export type AttachmentRefusal =
  | { kind: 'tooMany'; max: number }
  | { kind: 'tooManyDocuments'; max: number }
  | { kind: 'unsupported'; documents: boolean };

export interface AttachmentLimits {
  /** The plan's `maxImagesPerMessage`. */
  max: number;
  /** The plan's `fileLimits.imageMaxMb`, in bytes. */
  maxBytes: number;
  /** Documents a message may carry; 0 when the plan or the server takes none. */
  maxDocuments: number;
  /** The plan's `fileLimits.documentMaxMb`. */
  documentMaxMb: number;
}

export interface AttachmentData {
  items: Record<string, ComposerAttachment[]>;
  refusals: Record<string, AttachmentRefusal | undefined>;
}

export const initialState: AttachmentData = { items: {}, refusals: {} };

export const EMPTY: ComposerAttachment[] = [];

/** The item's state for a file from the server: a document may still be read, or have failed. */
export function fileState(file: Attachment): Pick<ComposerAttachment, 'file' | 'status' | 'error' | 'size'> {
  return {
    file,
    size: file.size,
    status: file.status === 'processing' ? 'processing' : file.status === 'failed' ? 'error' : 'ready',
    error: file.status === 'failed' ? { kind: 'unreadable' } : null,
  };
}

export function revoke(url: string | null): void {
  if (url) URL.revokeObjectURL(url);
}

/** Frees the previews of a send once they are no longer shown. */
export function releaseSent(sent: readonly SentAttachment[]): void {
  for (const attachment of sent) revoke(attachment.previewUrl);
}

