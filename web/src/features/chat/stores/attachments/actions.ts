/**
 * What the composer does with its files: add (within the plan's limits), remove, hand
 * over to a send, take back from a refused one, discard with a deleted conversation.
 */
import { randomId } from '@/lib/random-id';
import type { FileKind } from '@/types/generated';
import { chatApi } from '../../api/chat-api';
import { isDocument } from '../../lib/files';
import { classifyImage } from '../../lib/image-prep';
import type { AttachmentContext } from './context';
import {
  EMPTY,
  fileState,
  initialState,
  releaseSent,
  revoke,
  type AttachmentRefusal,
  type ComposerAttachment,
} from './state';
import type { AttachmentActions } from './types';
import { uploaders } from './uploads';

export function attachmentActions(ctx: AttachmentContext): AttachmentActions {
  const { set, get, controllers, earlyUpdates } = ctx;
  const { run, runDocument } = uploaders(ctx);
  return {
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
      set(initialState);
    },
  };
}
