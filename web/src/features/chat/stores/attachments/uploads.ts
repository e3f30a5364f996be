/**
 * The uploads of the composer's files: an image is prepared (lib/image-prep.ts), then
 * uploaded; a document goes up as it was picked. A `server_busy` refusal is tried again
 * as the server asks; a removal meanwhile stops the request (or deletes what arrived).
 */
import { isApiError } from '@/lib/api-client';
import type { Attachment } from '@/types/generated';
import { chatApi } from '../../api/chat-api';
import { newerFile } from '../../lib/files';
import { browserImageIo, ImagePrepError, prepareImage, type ImageIo, type PreparedImage } from '../../lib/image-prep';
import type { AttachmentContext } from './context';
import { fileState, type AttachmentError } from './state';

/** How often an upload refused with `server_busy` (429) is tried again. */
export const BUSY_RETRIES = 3;

let io: ImageIo = browserImageIo;
/** Tests swap the browser's image decoding for their own. */
export function setImageIo(next: ImageIo | null): void {
  io = next ?? browserImageIo;
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

export function uploaders({ get, controllers, earlyUpdates, locate, patch }: AttachmentContext) {
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

  return { run, runDocument };
}
