/**
 * What the chat's actions and frame handlers share: the store's `set`/`get`, the
 * bookkeeping of requests in flight (what frames changed while they ran wins over them),
 * and the few steps both take (apply to a loaded thread, move the branch shown…).
 */
import type { StoreApi } from 'zustand';
import { chatApi } from '../../api/chat-api';
import { placeConversation, touchConversation } from '../conversation-list';
import { ConversationPager, listFieldsAccess, type PagedList } from '../conversation-paging';
import { streamingMessage, type Thread } from '../thread';
import { omit, type ThreadEntry } from './state';
import type { ChatStore } from './types';

export interface ChatContext {
  set: StoreApi<ChatStore>['setState'];
  get: () => ChatStore;
  /** All conversations (not archived), paged; frames note what they change in it. */
  listPager: ConversationPager;
  archivedPager: ConversationPager;
  threadRequests: Map<string, number>;
  /**
   * Conversations whose current message a frame (or this tab) moved while their REST load
   * ran: the load's `currentMessageId` may be older, and is not taken.
   */
  currentMovedDuringLoad: Set<string>;
  /**
   * The latest rating request of each answer, while one is in flight: only its answer
   * settles what the tab shows (an earlier request's answer or frame may come later).
   */
  ratingRequests: Map<string, number>;
  counters: { found: number; rating: number };
  /** Applies `update` to a thread this tab has loaded; frames for others are dropped. */
  updateThread: (id: string, update: (entry: ThreadEntry) => ThreadEntry) => void;
  withMessages: (entry: ThreadEntry, messages: Thread, activity?: boolean) => ThreadEntry;
  dropProgress: (messageId: string) => void;
  endCancelling: (conversationId: string) => void;
  /** The conversation's current message becomes `pick(entry)` (a loaded conversation only). */
  moveCurrent: (id: string, pick: (entry: ThreadEntry) => string | null) => void;
  /** A message arrived in a conversation the list does not have: fetch and list it. */
  ensureListed: (id: string, at: string) => void;
}

export function createChatContext(set: ChatContext['set'], get: ChatContext['get']): ChatContext {
  /** Conversations being fetched because a message arrived in one the list lacks. */
  const fetchingListed = new Set<string>();
  const currentMovedDuringLoad = new Set<string>();

  const listPager = new ConversationPager({
    fetchPage: (cursor) => chatApi.listConversations(cursor),
    ...listFieldsAccess(get, (change) => set(change)),
  });

  const archivedPager = new ConversationPager({
    fetchPage: (cursor) => chatApi.listConversations(cursor, undefined, null, true),
    read: () => {
      const { archived, archivedStatus, archivedLoadingMore } = get();
      return { list: archived, status: archivedStatus, loadingMore: archivedLoadingMore };
    },
    write: ({ list, status, loadingMore }: Partial<PagedList>) =>
      set({
        ...(list ? { archived: list } : {}),
        ...(status ? { archivedStatus: status } : {}),
        ...(loadingMore !== undefined ? { archivedLoadingMore: loadingMore } : {}),
      }),
    // A frame that came meanwhile is newer than the page: what it unarchived stays out.
    belongs: (c) => c.archived,
  });

  const updateThread: ChatContext['updateThread'] = (id, update) => {
    const entry = get().threads[id];
    if (!entry || entry.status === 'deleted') return;
    const next = update(entry);
    if (next !== entry) set((state) => ({ threads: { ...state.threads, [id]: next } }));
  };

  const withMessages: ChatContext['withMessages'] = (entry, messages, activity = false) => {
    if (messages === entry.messages && !activity) return entry;
    return {
      ...entry,
      messages,
      lastActivity: activity ? Date.now() : entry.lastActivity,
      staleStream: entry.staleStream && streamingMessage(messages) !== undefined,
    };
  };

  const dropProgress = (messageId: string) => {
    if (get().progress[messageId]) set((state) => ({ progress: omit(state.progress, messageId) }));
  };

  const endCancelling = (conversationId: string) => {
    if (get().cancelling[conversationId]) set((state) => ({ cancelling: omit(state.cancelling, conversationId) }));
  };

  const moveCurrent = (id: string, pick: (entry: ThreadEntry) => string | null) => {
    updateThread(id, (entry) => {
      const currentId = pick(entry);
      return currentId === entry.currentId ? entry : { ...entry, currentId };
    });
    currentMovedDuringLoad.add(id);
  };

  const ensureListed = (id: string, at: string) => {
    const { list, listStatus } = get();
    if (list.items.some((c) => c._id === id)) {
      set({ list: touchConversation(list, id, at) });
      return;
    }
    if (listStatus !== 'ready' || fetchingListed.has(id)) return;
    fetchingListed.add(id);
    chatApi
      .getConversation(id)
      .then(({ data }) => {
        const { messages: _messages, ...conversation } = data;
        if (listPager.wasDeleted(id)) return;
        listPager.noteTouched(id);
        set((state) => ({ list: placeConversation(state.list, conversation) }));
      })
      .catch(() => undefined)
      .finally(() => fetchingListed.delete(id));
  };

  return {
    set,
    get,
    listPager,
    archivedPager,
    threadRequests: new Map(),
    currentMovedDuringLoad,
    ratingRequests: new Map(),
    counters: { found: 0, rating: 0 },
    updateThread,
    withMessages,
    dropProgress,
    endCancelling,
    moveCurrent,
    ensureListed,
  };
}
