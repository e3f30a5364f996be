/**
 * What the attachments' actions, uploads and frame handlers share: the store's
 * `set`/`get`, the uploads in flight, the frames that came before their upload's answer,
 * and finding, changing and merging an item wherever it now is.
 */
import type { StoreApi } from 'zustand';
import type { Attachment } from '@/types/generated';
import { newerFile } from '../../lib/files';
import { EMPTY, fileState, type ComposerAttachment } from './state';
import type { AttachmentState } from './types';

export interface AttachmentContext {
  set: StoreApi<AttachmentState>['setState'];
  get: () => AttachmentState;
  /** Uploads in flight, by localId, so a removal stops its request. */
  controllers: Map<string, AbortController>;
  /**
   * The latest `file.updated` of files no composer item holds yet: a frame may come before
   * the upload's own answer (which then takes the newer of the two), or be about another
   * tab's upload (kept a while, then forgotten: it is never asked for).
   */
  earlyUpdates: Map<string, Attachment>;
  rememberUpdate: (file: Attachment) => void;
  /** Where an item is now: the key it was added under, or where a restore put it. */
  locate: (localId: string) => string | undefined;
  patch: (localId: string, change: Partial<ComposerAttachment>) => void;
  /**
   * A copy of an uploaded file from the server (a frame, or its info): the composer item
   * holding it keeps the copy further along. False when no composer holds it.
   */
  merge: (update: Attachment) => boolean;
}

const EARLY_UPDATES_KEPT = 100;

export function createAttachmentContext(set: AttachmentContext['set'], get: AttachmentContext['get']): AttachmentContext {
  const earlyUpdates = new Map<string, Attachment>();

  const rememberUpdate = (file: Attachment) => {
    const known = earlyUpdates.get(file._id);
    earlyUpdates.delete(file._id);
    earlyUpdates.set(file._id, known ? newerFile(known, file) : file);
    if (earlyUpdates.size > EARLY_UPDATES_KEPT) earlyUpdates.delete(earlyUpdates.keys().next().value!);
  };

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

  return { set, get, controllers: new Map(), earlyUpdates, rememberUpdate, locate, patch, merge };
}
