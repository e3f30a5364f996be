/**
 * The images attached in a composer (keyed like drafts: a conversation id, or NEW_CHAT),
 * from the pick to the send. Each picked image is prepared (lib/image-prep.ts) and
 * uploaded at once (`POST /api/files`), so that sending only names the uploaded ids; its
 * preview shows the state meanwhile. A send hands the uploaded ones over to the pending
 * message (their previews show there until the server's message arrives); a refused send
 * gives them back.
 */
import { create } from 'zustand';
import { isApiError } from '@/lib/api-client';
import { randomId } from '@/lib/random-id';
import type { StoredFile } from '@/types/api';
import { chatApi } from '../api/chat-api';
import {
  browserImageIo,
  classifyImage,
  ImagePrepError,
  prepareImage,
  type ImageIo,
  type PreparedImage,
} from '../lib/image-prep';

export type AttachmentStatus = 'preparing' | 'uploading' | 'ready' | 'error';

/** Why an image could not be attached; `upload` carries the server's message (localized). */
export type AttachmentError = { kind: 'heic' } | { kind: 'optimize' } | { kind: 'upload'; message: string | null };

export interface ComposerAttachment {
  localId: string;
  name: string;
  /** An object URL of the picked (or converted) image; null while a HEIC converts, or if it failed. */
  previewUrl: string | null;
  status: AttachmentStatus;
  /** The server's file, once uploaded. */
  file: StoredFile | null;
  error: AttachmentError | null;
}

/** An uploaded image going along with a send: its id to send, its preview to show meanwhile. */
export interface SentAttachment {
  file: StoredFile;
  previewUrl: string | null;
}

/** Picked files that were not taken. `tooMany` uses the same words as the server's `too_many_images`. */
export type AttachmentRefusal = { kind: 'tooMany'; max: number } | { kind: 'unsupported' };

export interface AttachmentLimits {
  /** The plan's `maxImagesPerMessage`. */
  max: number;
  /** The plan's `fileLimits.imageMaxMb`, in bytes. */
  maxBytes: number;
}

export interface AttachmentState {
  items: Record<string, ComposerAttachment[]>;
  refusals: Record<string, AttachmentRefusal | undefined>;
  /** Takes images up to the limit (refusing the rest) and starts their uploads. */
  add: (key: string, files: readonly File[], limits: AttachmentLimits) => void;
  /** Drops one: stops its upload, and deletes the uploaded file (best effort). */
  remove: (key: string, localId: string) => void;
  dismissRefusal: (key: string) => void;
  /** The composer was sent: its items go (the uploaded ones' previews live on in the send). */
  handOver: (key: string) => void;
  /** A send was refused: its images come back, unless the composer has new ones. */
  restore: (key: string, sent: readonly SentAttachment[]) => void;
  /** The conversation is gone: its composer's images too (uploaded ones deleted, best effort). */
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

function revoke(url: string | null): void {
  if (url) URL.revokeObjectURL(url);
}

/** Frees the previews of a send once they are no longer shown. */
export function releaseSent(sent: readonly SentAttachment[]): void {
  for (const attachment of sent) revoke(attachment.previewUrl);
}

export function isBusy(item: ComposerAttachment): boolean {
  return item.status === 'preparing' || item.status === 'uploading';
}

/** The uploaded images a send carries, in the order they were picked. */
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

async function upload(blob: Blob, name: string, signal: AbortSignal): Promise<StoredFile> {
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
      patch(localId, { status: 'ready', file: stored });
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
      const images = files.filter((file) => classifyImage(file) !== 'unsupported');
      // Failed ones are not sent, so they leave room.
      const room = Math.max(0, limits.max - current.filter((item) => item.status !== 'error').length);
      const accepted = images.slice(0, room);
      const refusal: AttachmentRefusal | undefined =
        images.length > accepted.length
          ? { kind: 'tooMany', max: limits.max }
          : images.length < files.length
            ? { kind: 'unsupported' }
            : undefined;
      const added = accepted.map(
        (file): ComposerAttachment => ({
          localId: randomId(),
          name: file.name || 'image',
          // Browsers other than Safari cannot show HEIC: its preview waits for the JPEG.
          previewUrl: classifyImage(file) === 'heic' ? null : URL.createObjectURL(file),
          status: 'preparing',
          file: null,
          error: null,
        }),
      );
      set((state) => ({
        items: added.length > 0 ? { ...state.items, [key]: [...current, ...added] } : state.items,
        refusals: { ...state.refusals, [key]: refusal },
      }));
      added.forEach((item, index) => void run(item.localId, accepted[index]!, limits.maxBytes));
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
          name: file.name,
          previewUrl,
          status: 'ready',
          file,
          error: null,
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
      for (const items of Object.values(get().items)) for (const item of items) revoke(item.previewUrl);
      set({ items: {}, refusals: {} });
    },
  };
});

/** A composer's images; the same empty array while it has none, so selectors stay stable. */
export const selectAttachments =
  (key: string) =>
  (state: AttachmentState): ComposerAttachment[] =>
    state.items[key] ?? EMPTY;
