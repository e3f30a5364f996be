/**
 * What the socket tells the composer's files: `file.updated` (a document's progress or
 * end), and after a reconnect, which may have missed some, each document still being
 * read is asked for once (routed here by the app's socket router).
 */
import { isApiError } from '@/lib/api-client';
import { chatApi } from '../../api/chat-api';
import type { AttachmentContext } from './context';
import type { AttachmentFrameHandlers } from './types';

export function attachmentFrameHandlers({ get, merge, rememberUpdate }: AttachmentContext): AttachmentFrameHandlers {
  return {
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
  };
}
