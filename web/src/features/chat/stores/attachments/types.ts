/**
 * The store's shape: its data (state.ts) with what the composer does to it (actions.ts,
 * uploads.ts) and what the socket tells it (frames.ts). The interfaces live here, apart
 * from the code that builds them, so that context.ts (which every part imports) can type
 * `set`/`get` without importing a part or index.ts: the slice's imports go one way.
 */
import type { Attachment } from '@/types/generated';
import type { AttachmentData, AttachmentLimits, SentAttachment } from './state';

export interface AttachmentActions {
  /** Takes images and documents up to their limits (refusing the rest) and starts their uploads. */
  add: (key: string, files: readonly File[], limits: AttachmentLimits) => void;
  /** Drops one: stops its upload, and deletes the uploaded file (best effort). */
  remove: (key: string, localId: string) => void;
  dismissRefusal: (key: string) => void;
  /** The composer was sent: its items go (the uploaded ones' previews live on in the send). */
  handOver: (key: string) => void;
  /** A send was refused: its files come back, unless the composer has new ones. */
  restore: (key: string, sent: readonly SentAttachment[]) => void;
  /** The conversation is gone: its composer's files too (uploaded ones deleted, best effort). */
  discard: (key: string) => void;
  reset: () => void;
}

export interface AttachmentFrameHandlers {
  /** A `file.updated` frame: a document's progress or end, for whichever composer holds it. */
  onFileUpdated: (file: Attachment) => void;
  /**
   * After a reconnect: asks the server once for each uploaded document still being read
   * (frames missed meanwhile are not replayed); one that is gone (404) fails.
   */
  refreshProcessing: () => Promise<void>;
}

export type AttachmentState = AttachmentData & AttachmentActions & AttachmentFrameHandlers;
