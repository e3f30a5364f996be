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
 */
import { create } from 'zustand';
import { isApiError } from '@/lib/api-client';
import { randomId } from '@/lib/random-id';
import type { Attachment, FileKind } from '@/types/generated';
import { chatApi } from '../api/chat-api';
import { isDocument, newerFile } from '../lib/files';
import {
  browserImageIo,
  classifyImage,
  ImagePrepError,
  prepareImage,
  type ImageIo,
  type PreparedImage,
} from '../lib/image-prep';

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

export interface AttachmentState {
  items: Record<string, ComposerAttachment[]>;
  refusals: Record<string, AttachmentRefusal | undefined>;
  /** Takes images and documents up to their limits (refusing the rest) and starts their uploads. */
  add: (key: string, files: readonly File[], limits: AttachmentLimits) => void;
  /** A `file.updated` frame: a document's progress or end, for whichever composer holds it. */
  onFileUpdated: (file: Attachment) => void;
  /**
   * After a reconnect: asks the server once for each uploaded document still being read
   * (frames missed meanwhile are not replayed); one that is gone (404) fails.
   */
  refreshProcessing: () => Promise<void>;
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

const EMPTY: ComposerAttachment[] = [];

/** How often an upload refused with `server_busy` (429) is tried again. */
export const BUSY_RETRIES = 3;

let io: ImageIo = browserImageIo;
/** Tests swap the browser's image decoding for their own. */
export function setImageIo(next: ImageIo | null): void {
  io = next ?? browserImageIo;
}

// Uploads in flight, by localId, so a removal stops its request.
const controllers = new Map<string, AbortController>();

/**
 * The latest `file.updated` of files no composer item holds yet: a frame may come before
 * the upload's own answer (which then takes the newer of the two), or be about another
 * tab's upload (kept a while, then forgotten: it is never asked for).
 */
const earlyUpdates = new Map<string, Attachment>();
const EARLY_UPDATES_KEPT = 100;

function rememberUpdate(file: Attachment): void {
  const known = earlyUpdates.get(file._id);
  earlyUpdates.delete(file._id);
  earlyUpdates.set(file._id, known ? newerFile(known, file) : file);
  if (earlyUpdates.size > EARLY_UPDATES_KEPT) earlyUpdates.delete(earlyUpdates.keys().next().value!);
}

/** The item's state for a file from the server: a document may still be read, or have failed. */
function fileState(file: Attachment): Pick<ComposerAttachment, 'file' | 'status' | 'error' | 'size'> {
  return {
    file,
    size: file.size,
    status: file.status === 'processing' ? 'processing' : file.status === 'failed' ? 'error' : 'ready',
    error: file.status === 'failed' ? { kind: 'unreadable' } : null,
  };
}

function revoke(url: string | null): void {
  if (url) URL.revokeObjectURL(url);
}

/** Frees the previews of a send once they are no longer shown. */
export function releaseSent(sent: readonly SentAttachment[]): void {
  for (const attachment of sent) revoke(attachment.previewUrl);
}

/** Not ready yet, nor failed: a send waits for it (the server refuses a document being read). */
export function isBusy(item: ComposerAttachment): boolean {
  return item.status === 'preparing' || item.status === 'uploading' || item.status === 'processing';
}

/** The uploaded (and, for documents, read) files a send carries, in the order they were picked. */
export function sendable(items: readonly ComposerAttachment[]): SentAttachment[] {
  return items.flatMap((item) => (item.status === 'ready' && item.file ? [{ file: item.file, previewUrl: item.previewUrl }] : []));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new DOMException('Aborted', 'AbortError'));
      },
      { once: true },
    );
  });
}

async function upload(blob: Blob, name: string, signal: AbortSignal): Promise<Attachment> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return (await chatApi.uploadFile(blob, name, signal)).data;
    } catch (error) {
      // All of the server's image decoders are busy: wait as it asks, then try again.
      if (!isApiError(error) || error.code !== 'server_busy' || attempt >= BUSY_RETRIES) throw error;
      await sleep((error.retryAfter ?? 1) * 1000, signal);
    }
  }
}

function uploadError(error: unknown): AttachmentError {
  // The server's message is already in the user's language; a network or server failure
  // was toasted by the API client, and its text fits the preview too.
  if (isApiError(error) && (error.fromServer || error.alreadyNotified)) return { kind: 'upload', message: error.message };
  return { kind: 'upload', message: null };
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

export const useAttachmentStore = create<AttachmentState>()((set, get) => {
  /** Where an item is now: the key it was added under, or where a restore put it. */
  const locate = (localId: string): string | undefined =>
    Object.keys(get().items).find((key) => get().items[key]!.some((item) => item.localId === localId));

  const patch = (localId: string, change: Partial<ComposerAttachment>) => {
    const key = locate(localId);
    if (!key) return;
    set((state) => ({
      items: {
        ...state.items,
        [key]: (state.items[key] ?? EMPTY).map((item) => (item.localId === localId ? { ...item, ...change } : item)),
      },
    }));
  };

  /**
   * A copy of an uploaded file from the server (a frame, or its info): the composer item
   * holding it keeps the copy further along. False when no composer holds it.
   */
  const merge = (update: Attachment): boolean => {
    const key = Object.keys(get().items).find((k) => get().items[k]!.some((item) => item.file?._id === update._id));
    if (!key) return false;
    const current = get().items[key]!;
    const next = current.map((item) => {
      if (item.file?._id !== update._id) return item;
      const file = newerFile(item.file, update);
      return file === item.file ? item : { ...item, ...fileState(file) };
    });
    // A late progress after the end changes nothing: no render.
    if (next.some((item, index) => item !== current[index])) set((state) => ({ items: { ...state.items, [key]: next } }));
    return true;
  };

  /** A document goes up as it is; the server reads it afterwards. */
  const runDocument = async (localId: string, file: File, maxMb: number) => {
    // No use sending megabytes the server would stop reading at the plan's limit.
    if (file.size > maxMb * 1024 * 1024) {
      patch(localId, { status: 'error', error: { kind: 'tooLarge', max: maxMb } });
      return;
    }
    const controller = new AbortController();
    controllers.set(localId, controller);
    try {
      const answered = await upload(file, file.name, controller.signal);
      if (!locate(localId)) {
        void chatApi.deleteFile(answered._id).catch(() => undefined);
        return;
      }
      // Its frames may have come first; after this, they find the item.
      const early = earlyUpdates.get(answered._id);
      earlyUpdates.delete(answered._id);
      patch(localId, { kind: answered.kind, ...fileState(early ? newerFile(answered, early) : answered) });
    } catch (error) {
      if (!isAbort(error)) patch(localId, { status: 'error', error: uploadError(error) });
    } finally {
      controllers.delete(localId);
    }
  };

  const run = async (localId: string, file: File, maxBytes: number) => {
    const controller = new AbortController();
    controllers.set(localId, controller);
    try {
      let prepared: PreparedImage;
      try {
        prepared = await prepareImage(file, maxBytes, io);
      } catch (error) {
        const kind = error instanceof ImagePrepError ? error.reason : 'optimize';
        patch(localId, { status: 'error', error: { kind } });
        return;
      }
      const key = locate(localId);
      if (!key || controller.signal.aborted) return;
      const item = get().items[key]!.find((i) => i.localId === localId)!;
      // A HEIC could not be shown until converted.
      const previewUrl = item.previewUrl ?? URL.createObjectURL(prepared.blob);
      patch(localId, { status: 'uploading', previewUrl, name: prepared.name });

      const stored = await upload(prepared.blob, prepared.name, controller.signal);
      if (!locate(localId)) {
        // Removed while the answer was on its way: nothing will send it.
        void chatApi.deleteFile(stored._id).catch(() => undefined);
        return;
      }
      // The server tells what the file is: its answer, not the pick, decides how it shows.
      patch(localId, { kind: stored.kind, ...fileState(stored) });
    } catch (error) {
      if (!isAbort(error)) patch(localId, { status: 'error', error: uploadError(error) });
    } finally {
      controllers.delete(localId);
    }
  };

  return {
    items: {},
    refusals: {},

    add: (key, files, limits) => {
      const current = get().items[key] ?? EMPTY;
      // Failed ones are not sent, so they leave room.
      const kept = (kind: FileKind) => current.filter((item) => item.kind === kind && item.status !== 'error').length;
      const room: Record<FileKind, number> = {
        image: Math.max(0, limits.max - kept('image')),
        document: Math.max(0, limits.maxDocuments - kept('document')),
      };
      const over: Record<FileKind, boolean> = { image: false, document: false };
      let unsupported = false;
      const accepted: { file: File; kind: FileKind }[] = [];
      for (const file of files) {
        // By name and type only, to route it: the server tells what it is from its content.
        const kind: FileKind | null =
          classifyImage(file) !== 'unsupported' ? 'image' : limits.maxDocuments > 0 && isDocument(file) ? 'document' : null;
        if (!kind) unsupported = true;
        else if (room[kind] === 0) over[kind] = true;
        else {
          room[kind] -= 1;
          accepted.push({ file, kind });
        }
      }
      const refusal: AttachmentRefusal | undefined = over.image
        ? { kind: 'tooMany', max: limits.max }
        : over.document
          ? { kind: 'tooManyDocuments', max: limits.maxDocuments }
          : unsupported
            ? { kind: 'unsupported', documents: limits.maxDocuments > 0 }
            : undefined;
      const added = accepted.map(
        ({ file, kind }): ComposerAttachment => ({
          localId: randomId(),
          kind,
          name: file.name || kind,
          size: file.size,
          // Browsers other than Safari cannot show HEIC: its preview waits for the JPEG.
          previewUrl: kind === 'image' && classifyImage(file) !== 'heic' ? URL.createObjectURL(file) : null,
          status: kind === 'image' ? 'preparing' : 'uploading',
          file: null,
          error: null,
        }),
      );
      set((state) => ({
        items: added.length > 0 ? { ...state.items, [key]: [...current, ...added] } : state.items,
        refusals: { ...state.refusals, [key]: refusal },
      }));
      added.forEach((item, index) => {
        const { file } = accepted[index]!;
        void (item.kind === 'image' ? run(item.localId, file, limits.maxBytes) : runDocument(item.localId, file, limits.documentMaxMb));
      });
    },

    onFileUpdated: (update) => {
      if (!merge(update)) rememberUpdate(update);
    },

    refreshProcessing: async () => {
      // Frames are not replayed after a reconnect (docs/protocol.md `file.updated`): a
      // document whose end was announced while this tab was away would stay `processing`
      // for good, and hold the send with it. So each one is asked for once, here; never polled.
      const ids = Object.values(get().items)
        .flat()
        .flatMap((item) => (item.kind === 'document' && item.status === 'processing' && item.file ? [item.file._id] : []));
      await Promise.all(
        ids.map(async (id) => {
          try {
            merge((await chatApi.getFileInfo(id)).data);
          } catch (error) {
            // Gone (deleted, or swept unsent): it can no longer be sent, the user removes it.
            // Any other failure leaves it as it is, until a frame or the next reconnect.
            if (!isApiError(error) || error.status !== 404) return;
            const held = Object.values(get().items)
              .flat()
              .find((item) => item.file?._id === id)?.file;
            if (held) merge({ ...held, status: 'failed' });
          }
        }),
      );
    },

    remove: (key, localId) => {
      const item = (get().items[key] ?? EMPTY).find((i) => i.localId === localId);
      if (!item) return;
      controllers.get(localId)?.abort();
      revoke(item.previewUrl);
      set((state) => ({
        items: { ...state.items, [key]: (state.items[key] ?? EMPTY).filter((i) => i.localId !== localId) },
        refusals: { ...state.refusals, [key]: undefined },
      }));
      // Not sent yet, so the server lets it go; should that fail, it stays unsent, unseen.
      if (item.file) void chatApi.deleteFile(item.file._id).catch(() => undefined);
    },

    dismissRefusal: (key) => set((state) => ({ refusals: { ...state.refusals, [key]: undefined } })),

    handOver: (key) => {
      const items = get().items[key] ?? EMPTY;
      for (const item of items) {
        if (item.status !== 'ready') {
          controllers.get(item.localId)?.abort();
          revoke(item.previewUrl);
          // A document that could not be read stays unsent: no need to keep it 24 hours.
          if (item.file) void chatApi.deleteFile(item.file._id).catch(() => undefined);
        }
      }
      set((state) => ({
        items: { ...state.items, [key]: EMPTY },
        refusals: { ...state.refusals, [key]: undefined },
      }));
    },

    restore: (key, sent) => {
      if (sent.length === 0) return;
      if ((get().items[key] ?? EMPTY).length > 0) {
        releaseSent(sent);
        return;
      }
      const items = sent.map(
        ({ file, previewUrl }): ComposerAttachment => ({
          localId: randomId(),
          kind: file.kind,
          name: file.name,
          previewUrl,
          ...fileState(file),
        }),
      );
      set((state) => ({ items: { ...state.items, [key]: items } }));
    },

    discard: (key) => {
      for (const item of get().items[key] ?? EMPTY) get().remove(key, item.localId);
      set((state) => ({ refusals: { ...state.refusals, [key]: undefined } }));
    },

    reset: () => {
      controllers.forEach((controller) => controller.abort());
      controllers.clear();
      earlyUpdates.clear();
      for (const items of Object.values(get().items)) for (const item of items) revoke(item.previewUrl);
      set({ items: {}, refusals: {} });
    },
  };
});

/** A composer's files; the same empty array while it has none, so selectors stay stable. */
export const selectAttachments =
  (key: string) =>
  (state: AttachmentState): ComposerAttachment[] =>
    state.items[key] ?? EMPTY;
