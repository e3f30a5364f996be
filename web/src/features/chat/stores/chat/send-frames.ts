/**
 * The frames that settle this tab's sends (routed here by the app's socket router): a
 * refusal or a failed answer (`error`), and a reconnect (`ready`), after which a send in
 * flight may or may not have been made. Either way what was typed comes back, to retry.
 */
import { isErrorCode } from '@/lib/error-codes';
import { releaseSent, useAttachmentStore } from '../attachments';
import { forgetStreamPositions } from '../thread';
import type { ChatContext } from './context';
import { DEFAULT_OPTIONS, omit, sendKey, type ChatError, type ThreadEntry } from './state';
import type { SendFrameHandlers } from './types';

export function sendFrameHandlers(ctx: ChatContext): SendFrameHandlers {
  const { set, get, updateThread, withMessages, dropProgress, endCancelling } = ctx;
  return {
    onReady: () => {
      // Frames were missed while disconnected: positions are unknown until a snapshot,
      // and the list and the shown conversation are reloaded (docs/protocol.md).
      const inFlight = Object.values(get().pending);
      set((state) => {
        const threads: Record<string, ThreadEntry> = {};
        for (const [id, entry] of Object.entries(state.threads)) {
          const messages = forgetStreamPositions(entry.messages);
          threads[id] = messages === entry.messages ? entry : { ...entry, messages };
        }
        // A regenerate in flight may or may not have been made: the reload tells.
        return { threads, cancelling: {}, regenerating: {} };
      });
      const { listStatus, shownId } = get();
      if (listStatus !== 'idle') void get().loadConversations();
      const reloads = new Map<string, Promise<void>>();
      if (shownId) reloads.set(shownId, get().loadThread(shownId));
      // Sends in flight when the socket closed may or may not have been processed: look
      // for their clientId in the reloaded conversation before offering them again.
      for (const send of inFlight) {
        const id = send.conversationId;
        if (id && !reloads.has(id)) reloads.set(id, get().loadThread(id));
        void (id ? reloads.get(id)! : Promise.resolve()).then(() => {
          if (!get().pending[send.clientId]) return;
          const stored = id ? get().threads[id]?.messages.some((m) => m.clientId === send.clientId) : false;
          const key = sendKey(send);
          if (stored) releaseSent(send.attachments);
          else useAttachmentStore.getState().restore(key, send.attachments);
          set((state) => ({
            pending: omit(state.pending, send.clientId),
            ...(stored
              ? {}
              : {
                  // A new chat's conversation may exist without this tab knowing.
                  errors: {
                    ...state.errors,
                    [key]: { code: id ? 'not_sent' : 'maybe_not_sent', ...(send.editOf ? {} : { resend: true }) },
                  },
                  drafts: (state.drafts[key] ?? '').trim() ? state.drafts : { ...state.drafts, [key]: send.content },
                }),
          }));
        });
      }
    },


    onError: ({ clientId, code, message, field }) => {
      if (!clientId) return; // about a cancel, an open or an unreadable frame: nothing to show
      // A code this client does not know (a newer server) still shows the server's words.
      const error: ChatError = { code: isErrorCode(code) ? code : 'unknown_error', message, ...(field ? { field } : {}) };
      const regenerate = get().regenerating[clientId];
      if (regenerate) {
        set((state) => ({
          regenerating: omit(state.regenerating, clientId),
          errors: { ...state.errors, [regenerate.conversationId]: error },
        }));
        return;
      }
      const pending = get().pending[clientId];
      if (pending) {
        const key = sendKey(pending);
        // The images come back with the text, to send again or remove.
        useAttachmentStore.getState().restore(key, pending.attachments);
        set((state) => {
          const draft = state.drafts[key] ?? '';
          return {
            pending: omit(state.pending, clientId),
            // An edit's retry is its reopened box; a composer send's, the composer.
            errors: { ...state.errors, [key]: pending.editOf ? error : { ...error, resend: true } },
            // The refused text goes back where it was written, to change or retry: the
            // edit's box opens again, or the composer.
            ...(pending.editOf
              ? { edits: { ...state.edits, [pending.editOf]: state.edits[pending.editOf] ?? pending.content } }
              : { drafts: draft.trim() ? state.drafts : { ...state.drafts, [key]: pending.content } }),
            // And a refused deep search or image stays chosen for the retry.
            ...(pending.imageGeneration
              ? {
                  options: {
                    ...state.options,
                    [key]: { ...DEFAULT_OPTIONS, ...state.options[key], imageGeneration: true, webSearch: false, deepSearch: false },
                  },
                  imageSends: omit(state.imageSends, clientId),
                }
              : pending.deepSearch
                ? { options: { ...state.options, [key]: { ...DEFAULT_OPTIONS, ...state.options[key], webSearch: true, deepSearch: true } } }
                : {}),
          };
        });
        return;
      }
      // Another tab's send, or the answer of ours that failed (model_error): find the
      // conversation by the messages' clientId.
      for (const [id, entry] of Object.entries(get().threads)) {
        const answer = entry.messages.find((m) => m.clientId === clientId && m.role === 'assistant');
        const asked = answer ?? entry.messages.find((m) => m.clientId === clientId);
        if (!asked) continue;
        // A send that failed after its answer was announced gets no message.completed.
        if (answer) dropProgress(answer._id);
        if (answer && !answer.final) {
          updateThread(id, (e) =>
            withMessages(
              e,
              e.messages.map((m) => (m._id === answer._id ? { ...m, status: 'error' as const, final: true } : m)),
              true,
            ),
          );
          endCancelling(id);
        }
        set((state) => ({ errors: { ...state.errors, [id]: error } }));
        return;
      }
    },
  };
}
