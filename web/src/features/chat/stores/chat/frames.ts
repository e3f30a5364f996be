/**
 * The socket frames the chat applies (routed here by the app's socket router): the
 * conversations' and messages' changes, made in this tab or any other, the answers as
 * they stream, search progress and ratings (what settles this tab's sends: send-frames.ts).
 */
import { addStep, readProgressFrame } from '../../lib/search-progress';
import { releaseSent, useAttachmentStore } from '../attachments';
import { placeConversation, removeConversation, upsertConversation } from '../conversation-list';
import {
  applyCompleted,
  applyCreated,
  applyDelta,
  applyFeedback,
  applySnapshot,
  EMPTY_THREAD,
  streamingMessage,
} from '../thread';
import type { ChatContext } from './context';
import {
  MAX_PROGRESS_ENTRIES,
  newChatKey,
  omit,
  STALE_RECHECK_MS,
  type ChatState,
} from './state';
import type { ChatFrameHandlers } from './types';

export function chatFrameHandlers(ctx: ChatContext): ChatFrameHandlers {
  const { set, get, listPager, ratingRequests, updateThread, withMessages, dropProgress, endCancelling, moveCurrent, ensureListed } = ctx;
  return {
    onConversationCreated: ({ clientId, conversation }) => {
      listPager.noteTouched(conversation._id);
      set((state) => {
        const mine = state.pending[clientId];
        const next: Partial<ChatState> = { list: upsertConversation(state.list, conversation) };
        if (mine) {
          next.pending = { ...state.pending, [clientId]: { ...mine, conversationId: conversation._id } };
          next.createdFor = { ...state.createdFor, [clientId]: conversation._id };
          // The new chat's choices go along to the conversation.
          const from = newChatKey(mine.projectId);
          const options = state.options[from];
          if (options) next.options = { ...omit(state.options, from), [conversation._id]: options };
          // This tab made it: its frames are applied from the start, no reload needed.
          next.threads = {
            ...state.threads,
            [conversation._id]: {
              status: 'ready',
              conversation,
              messages: EMPTY_THREAD,
              currentId: conversation.currentMessageId,
              lastActivity: Date.now(),
              staleStream: false,
            },
          };
        }
        return next;
      });
    },

    onConversationUpdated: ({ conversation }) => {
      listPager.noteTouched(conversation._id);
      // Archived: out of the list, and out of a first page being fetched with it too.
      if (conversation.archived) listPager.noteDeleted(conversation._id);
      else listPager.noteRestored(conversation._id);
      set((state) => ({
        list: placeConversation(state.list, conversation),
        archived: state.archivedStatus === 'idle' ? state.archived : placeConversation(state.archived, conversation, true),
      }));
      updateThread(conversation._id, (entry) => ({ ...entry, conversation }));
      // The branch shown moved (a version picked in some tab), or this says it again.
      moveCurrent(conversation._id, () => conversation.currentMessageId);
    },

    onConversationDeleted: ({ conversationId }) => {
      listPager.noteDeleted(conversationId);
      for (const send of Object.values(get().pending)) {
        if (send.conversationId === conversationId) releaseSent(send.attachments);
      }
      useAttachmentStore.getState().discard(conversationId);
      set((state) => {
        const entry = state.threads[conversationId];
        const pending = Object.fromEntries(
          Object.entries(state.pending).filter(([, p]) => p.conversationId !== conversationId),
        );
        return {
          list: removeConversation(state.list, conversationId),
          archived: removeConversation(state.archived, conversationId),
          threads: entry
            ? { ...state.threads, [conversationId]: { ...entry, status: 'deleted', messages: EMPTY_THREAD } }
            : state.threads,
          pending,
          drafts: omit(state.drafts, conversationId),
          errors: omit(state.errors, conversationId),
          cancelling: omit(state.cancelling, conversationId),
          regenerating: Object.fromEntries(
            Object.entries(state.regenerating).filter(([, r]) => r.conversationId !== conversationId),
          ),
          progress: Object.fromEntries(Object.entries(state.progress).filter(([, p]) => p.conversationId !== conversationId)),
        };
      });
    },

    onConversationOpened: ({ conversationId, streaming }) => {
      if (streaming) return;
      const entry = get().threads[conversationId];
      if (!entry || !streamingMessage(entry.messages)) return;
      // The server runs no answer here, yet one shows streaming: either it has just
      // ended (its message.completed follows) or its server was lost. Look again shortly.
      setTimeout(() => {
        const current = get().threads[conversationId];
        if (!current || !streamingMessage(current.messages)) return;
        void get()
          .loadThread(conversationId)
          .then(() =>
            updateThread(conversationId, (e) =>
              streamingMessage(e.messages)?.seq === null && !e.staleStream ? { ...e, staleStream: true } : e,
            ),
          );
      }, STALE_RECHECK_MS);
    },

    onMessageCreated: ({ conversationId, clientId, message }) => {
      listPager.noteTouched(conversationId);
      ensureListed(conversationId, message.createdAt);
      const mine = message.role === 'user' && clientId ? get().pending[clientId] : undefined;
      if (mine && clientId) {
        // The server's message shows its own thumbnails from now on.
        releaseSent(mine.attachments);
        set((state) => ({ pending: omit(state.pending, clientId) }));
      }
      if (message.role === 'assistant' && clientId && get().regenerating[clientId]) {
        set((state) => ({ regenerating: omit(state.regenerating, clientId) }));
      }
      updateThread(conversationId, (entry) => ({
        ...withMessages(entry, applyCreated(entry.messages, message), true),
        staleStream: false,
      }));
      // A new answer is the conversation's current message: the server made it so, and
      // every tab shows it at once. Its question comes just before it and is shown too
      // (so an edit does not flash the old branch between the two frames).
      moveCurrent(conversationId, () => message._id);
    },

    onMessageDelta: (frame) => {
      let gap = false;
      updateThread(frame.conversationId, (entry) => {
        const result = applyDelta(entry.messages, frame);
        gap = result.gap;
        return withMessages(entry, result.thread, result.thread !== entry.messages);
      });
      return gap;
    },

    onMessageSnapshot: (frame) => {
      updateThread(frame.conversationId, (entry) => ({
        ...withMessages(entry, applySnapshot(entry.messages, frame), true),
        staleStream: false,
      }));
    },

    onMessageCompleted: ({ conversationId, message }) => {
      updateThread(conversationId, (entry) => withMessages(entry, applyCompleted(entry.messages, message), true));
      endCancelling(conversationId);
      dropProgress(message._id);
    },

    onSearchProgress: (value) => {
      const frame = readProgressFrame(value);
      // A late frame for an answer that already ended here changes nothing.
      const known = get().threads[frame.conversationId]?.messages.find((m) => m._id === frame.messageId);
      if (known?.final) return;
      set((state) => {
        const entries = Object.entries(state.progress).filter(([id]) => id !== frame.messageId);
        const next = addStep(state.progress[frame.messageId], frame);
        // The answer moved on: it goes last, and the oldest beyond the cap are forgotten.
        return { progress: Object.fromEntries([...entries.slice(-(MAX_PROGRESS_ENTRIES - 1)), [frame.messageId, next]]) };
      });
      // The progress shows the answer is alive (the watchdog waits for deltas otherwise).
      updateThread(frame.conversationId, (entry) => (known ? { ...entry, lastActivity: Date.now() } : entry));
    },

    onMessageFeedback: ({ conversationId, messageId, feedback }) => {
      // This tab's own rating is on its way: its answer says how it ended.
      if (ratingRequests.has(messageId)) return;
      updateThread(conversationId, (entry) => withMessages(entry, applyFeedback(entry.messages, messageId, feedback)));
    },

  };
}
