/**
 * The chat's actions on its lists and conversations: REST loads (the lists page through
 * conversation-paging.ts), the composer's drafts and options, rename, pin, archive,
 * delete. Sending and what follows it are in send-actions.ts.
 */
import { isApiError } from '@/lib/api-client';
import { chatApi } from '../../api/chat-api';
import { releaseSent } from '../attachments';
import { applyRest, EMPTY_THREAD } from '../thread';
import type { ChatContext } from './context';
import { DEFAULT_OPTIONS, initialState, omit, type ThreadEntry } from './state';
import type { ChatActions } from './types';

export function chatActions(ctx: ChatContext): ChatActions {
  const { set, get, listPager, archivedPager, threadRequests, currentMovedDuringLoad, ratingRequests, counters, updateThread, withMessages } = ctx;
  return {
    reset: () => {
      for (const send of Object.values(get().pending)) releaseSent(send.attachments);
      listPager.reset();
      archivedPager.reset();
      threadRequests.clear();
      currentMovedDuringLoad.clear();
      ratingRequests.clear();
      set(initialState);
    },

    loadConversations: () => listPager.loadFirst(),

    loadMoreConversations: () => listPager.loadMore(),

    loadThread: async (id) => {
      const request = (threadRequests.get(id) ?? 0) + 1;
      threadRequests.set(id, request);
      set((state) => {
        const existing = state.threads[id];
        const entry: ThreadEntry = existing
          ? { ...existing, status: existing.status === 'ready' ? 'ready' : 'loading' }
          : {
              status: 'loading',
              conversation: null,
              messages: EMPTY_THREAD,
              currentId: null,
              lastActivity: Date.now(),
              staleStream: false,
            };
        return { threads: { ...state.threads, [id]: entry } };
      });
      currentMovedDuringLoad.delete(id);
      try {
        const { data } = await chatApi.getConversation(id);
        if (threadRequests.get(id) !== request) return;
        const { messages, ...conversation } = data;
        const moved = currentMovedDuringLoad.has(id);
        currentMovedDuringLoad.delete(id);
        updateThread(id, (entry) => ({
          ...withMessages(entry, applyRest(entry.messages, messages), true),
          status: 'ready',
          conversation: entry.conversation && entry.conversation.updatedAt > conversation.updatedAt ? entry.conversation : conversation,
          currentId: moved ? entry.currentId : conversation.currentMessageId,
        }));
      } catch (error) {
        if (threadRequests.get(id) !== request) return;
        const notFound = isApiError(error) && (error.status === 404 || error.code === 'not_found' || error.code === 'validation_error');
        updateThread(id, (entry) => ({
          ...entry,
          status: notFound ? 'notFound' : entry.status === 'ready' ? 'ready' : 'error',
        }));
      }
    },

    setShown: (id) => set({ shownId: id }),

    setDraft: (key, text) => set((state) => ({ drafts: { ...state.drafts, [key]: text } })),

    setError: (key, error) => set((state) => ({ errors: { ...state.errors, [key]: error } })),

    setOptions: (key, options) =>
      set((state) => ({ options: { ...state.options, [key]: { ...DEFAULT_OPTIONS, ...state.options[key], ...options } } })),

    requestComposerFocus: () => set((state) => ({ focusRequest: state.focusRequest + 1 })),

    rename: (id, title) => get().update(id, { title }),

    update: async (id, patch) => {
      const { data } = await chatApi.updateConversation(id, patch);
      get().onConversationUpdated({ conversation: data });
    },

    loadArchived: () => archivedPager.loadFirst(),

    loadMoreArchived: () => archivedPager.loadMore(),

    showFound: (conversationId, messageId) => set({ found: { conversationId, messageId, seq: ++counters.found } }),

    clearFound: () => set({ found: null }),

    remove: async (id) => {
      set((state) => ({ deletedHere: { ...state.deletedHere, [id]: true } }));
      try {
        await chatApi.deleteConversation(id);
      } catch (error) {
        set((state) => ({ deletedHere: omit(state.deletedHere, id) }));
        throw error;
      }
      get().onConversationDeleted({ conversationId: id });
    },

    markDeletedHere: (ids) => {
      if (ids.length === 0) return;
      set((state) => ({ deletedHere: { ...state.deletedHere, ...Object.fromEntries(ids.map((id) => [id, true as const])) } }));
    },
  };
}
