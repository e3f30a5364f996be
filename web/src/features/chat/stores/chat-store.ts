/**
 * The chat's state: the conversation list, the messages of the conversations this tab
 * has loaded, the sends in flight, drafts and errors per conversation. REST loads it; the
 * socket's frames keep it live (applied by chat-sync.ts through the `on…` actions here).
 */
import { create } from 'zustand';
import { isApiError } from '@/lib/api-client';
import { isErrorCode, type AppErrorCode } from '@/lib/error-codes';
import { randomId } from '@/lib/random-id';
import { chatSocket } from '@/lib/socket';
import type { ServerFrames } from '@/lib/socket-protocol';
import type { Conversation, Feedback, Rating } from '@/types/generated';
import { chatApi, type ConversationPatch } from '../api/chat-api';
import { addStep, readProgressFrame, type SearchProgress } from '../lib/search-progress';
import { releaseSent, useAttachmentStore, type SentAttachment } from './attachment-store';
import {
  appendPage,
  EMPTY_LIST,
  placeConversation,
  removeConversation,
  replaceWithFirstPage,
  touchConversation,
  upsertConversation,
  type ConversationList,
} from './conversation-list';
import {
  applyCompleted,
  applyCreated,
  applyDelta,
  applyFeedback,
  applyRest,
  applySnapshot,
  EMPTY_THREAD,
  forgetStreamPositions,
  newestBelow,
  streamingMessage,
  type Thread,
} from './thread';

/** The key of drafts and errors of the "new chat" view (no conversation yet). */
export const NEW_CHAT = 'new';

/**
 * The key of a new chat's drafts, errors, options and files: a new chat in a project
 * keeps its own, so what is typed there is not sent outside the project (or the reverse).
 */
export function newChatKey(projectId: string | null | undefined): string {
  return projectId ? `${NEW_CHAT}:${projectId}` : NEW_CHAT;
}

/** Where a send's draft and errors live: its conversation, or the new chat it started from. */
function sendKey(send: Pick<PendingSend, 'conversationId' | 'projectId'>): string {
  return send.conversationId ?? newChatKey(send.projectId);
}

/** How long after `conversation.opened` (not streaming) a still-streaming answer is rechecked. */
export const STALE_RECHECK_MS = 3000;

/**
 * Answers whose search progress is kept at most: an answer whose end this tab never
 * hears of (its conversation not loaded here, its server lost) is forgotten in time.
 */
export const MAX_PROGRESS_ENTRIES = 20;

/** This tab's image sends remembered at most (their answers show "Creating the image…"). */
export const MAX_IMAGE_SENDS = 20;

type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

export interface ThreadEntry {
  status: 'loading' | 'ready' | 'notFound' | 'error' | 'deleted';
  conversation: Conversation | null;
  /** Every branch's messages (see thread.ts). */
  messages: Thread;
  /**
   * The last message of the branch shown (`currentMessageId`): from REST, then from
   * `conversation.updated`, from every `message.created` (a new answer is shown at once
   * in every tab) and from this tab's own switches.
   */
  currentId: string | null;
  /** When a frame last moved its streaming answer (Date.now()), for the watchdog. */
  lastActivity: number;
  /**
   * The server said nothing is being written, yet a reload still shows an answer
   * streaming: its server was lost. Shown as interrupted; the composer is not blocked.
   */
  staleStream: boolean;
}

export interface PendingSend {
  clientId: string;
  /** null until `conversation.created` for a new conversation. */
  conversationId: string | null;
  content: string;
  /** Its uploaded images, shown from their local previews until the server's message. */
  attachments: SentAttachment[];
  /** Sent as a deep search: a refused send turns deep search back on. */
  deepSearch?: boolean;
  /** Sent to make an image: a refused send turns "Create image" back on. */
  imageGeneration?: boolean;
  /** The project a new conversation was asked to start in. */
  projectId?: string;
  /**
   * Where its question will hang: the current message when sent, or the parent of the
   * question it replaces. The tab shows that branch with the pending question under it.
   */
  parentId: string | null;
  /** The question this one is a new version of (an edit). */
  editOf?: string;
  createdAt: string;
}

/** A `chat.regenerate` this tab sent, until its answer is created or it is refused. */
export interface PendingRegenerate {
  conversationId: string;
  /** The answer made again. */
  messageId: string;
}

/** A refused send or failed answer; client-side codes (`offline`) have no message. */
export interface ChatError {
  code: AppErrorCode;
  message?: string;
  field?: string;
  /**
   * A send from the composer that stored nothing: its text, files and options are back in
   * the composer, so sending them again is the retry.
   */
  resend?: boolean;
}

export interface SendInput {
  conversationId: string | null;
  /** May be empty when images go along. */
  content: string;
  model: string | null;
  webSearch: boolean;
  /** A deep search (sent with web search on); for this send only. */
  deepSearch?: boolean;
  /** Make an image (never with a web search); for this send only. */
  imageGeneration?: boolean;
  attachments?: SentAttachment[];
  /** A new conversation starts in this project (ignored with a conversationId). */
  projectId?: string | null;
  /** The question of the conversation this one is a new version of (an edit). */
  editOf?: string | null;
}

/** A search hit being opened: its conversation shows its branch and scrolls to it. */
export interface FoundMessage {
  conversationId: string;
  messageId: string;
  /** Bumped on every choice, so choosing the same hit again scrolls again. */
  seq: number;
}

export interface ChatState {
  list: ConversationList;
  listStatus: LoadStatus;
  loadingMore: boolean;
  loadMoreFailed: boolean;
  /** The archived conversations (the "Archived" view), loaded when it opens. */
  archived: ConversationList;
  archivedStatus: LoadStatus;
  archivedLoadingMore: boolean;
  /** The search hit to show once its conversation is on screen. */
  found: FoundMessage | null;
  threads: Record<string, ThreadEntry>;
  pending: Record<string, PendingSend>;
  /** clientId of a send → the conversation `conversation.created` made for it. */
  createdFor: Record<string, string>;
  /** Keyed by conversation id, or a new chat's key (newChatKey). */
  drafts: Record<string, string>;
  errors: Record<string, ChatError | undefined>;
  /** The conversation the page shows, reopened and reloaded after a reconnect. */
  shownId: string | null;
  /** Conversations whose `chat.cancel` was sent, until their answer ends. */
  cancelling: Record<string, true>;
  /** The composer's model and web search choices, keyed like drafts. */
  options: Record<string, ComposerOptions>;
  /** Conversations this tab deleted (not "deleted elsewhere"). */
  deletedHere: Record<string, true>;
  /** Bumped to ask the composer to take the focus (the "new chat" button). */
  focusRequest: number;
  /**
   * The web search steps of answers being prepared, by messageId (`search.progress`);
   * dropped at the answer's end. An answer this tab does not know yet may have some.
   */
  progress: Record<string, SearchProgress>;
  /**
   * clientIds of this tab's sends that asked for an image, the newest last: their answer
   * is an image answer from its first frame (other tabs know it by its model).
   */
  imageSends: Record<string, true>;
  /** This tab's regenerates in flight, by clientId. */
  regenerating: Record<string, PendingRegenerate>;
  /** The text of each question being edited in place, by its id. */
  edits: Record<string, string>;
}

export interface ComposerOptions {
  /** The picked model; null follows the conversation's default. */
  model: string | null;
  webSearch: boolean;
  /** Deep search for the next send (implies web search); off again once sent. */
  deepSearch: boolean;
  /** "Create image" for the next send (never with web or deep search); off again once sent. */
  imageGeneration: boolean;
}

export interface ChatActions {
  reset: () => void;
  loadConversations: () => Promise<void>;
  loadMoreConversations: () => Promise<void>;
  loadThread: (id: string) => Promise<void>;
  setShown: (id: string | null) => void;
  setDraft: (key: string, text: string) => void;
  setError: (key: string, error: ChatError | undefined) => void;
  setOptions: (key: string, options: Partial<ComposerOptions>) => void;
  requestComposerFocus: () => void;
  /** Sends a message; the clientId, or null when the socket is not connected. */
  send: (input: SendInput) => string | null;
  cancel: (conversationId: string) => boolean;
  /**
   * Shows the branch through `messageId` (a version picked): at once here, and in the
   * other tabs once the server's `conversation.updated` comes. False when offline.
   */
  selectVersion: (conversationId: string, messageId: string) => boolean;
  /** Asks for a new version of an answer; the clientId, or null when offline. */
  regenerate: (conversationId: string, messageId: string, model: string | null) => string | null;
  /** Opens (text), changes (text) or closes (undefined) the in-place edit of a question. */
  setEdit: (messageId: string, text: string | undefined) => void;
  /**
   * Rates an answer (null: takes the rating back), shown at once; the server's answer
   * is the feedback then. A failure puts the previous one back and is thrown.
   */
  rateAnswer: (conversationId: string, messageId: string, rating: Rating | null, comment?: string) => Promise<void>;
  rename: (id: string, title: string) => Promise<void>;
  /** Renames, pins or archives; applied from the answer here, from the frame elsewhere. */
  update: (id: string, patch: ConversationPatch) => Promise<void>;
  loadArchived: () => Promise<void>;
  loadMoreArchived: () => Promise<void>;
  /** Opens a search hit: its conversation shows the message's branch and scrolls to it. */
  showFound: (conversationId: string, messageId: string) => void;
  clearFound: () => void;
  remove: (id: string) => Promise<void>;
  /**
   * These conversations are being deleted by this tab (with their project): their
   * `conversation.deleted` is not news to this tab.
   */
  markDeletedHere: (ids: readonly string[]) => void;

  onReady: () => void;
  onConversationCreated: (frame: ServerFrames['conversation.created']) => void;
  onConversationUpdated: (frame: ServerFrames['conversation.updated']) => void;
  onConversationDeleted: (frame: ServerFrames['conversation.deleted']) => void;
  onConversationOpened: (frame: ServerFrames['conversation.opened']) => void;
  onMessageCreated: (frame: ServerFrames['message.created']) => void;
  /** Returns whether a gap was found (the caller reopens the conversation). */
  onMessageDelta: (frame: ServerFrames['message.delta']) => boolean;
  onMessageSnapshot: (frame: ServerFrames['message.snapshot']) => void;
  onMessageCompleted: (frame: ServerFrames['message.completed']) => void;
  onSearchProgress: (frame: ServerFrames['search.progress']) => void;
  onMessageFeedback: (frame: ServerFrames['message.feedback']) => void;
  onError: (frame: ServerFrames['error']) => void;
}

export type ChatStore = ChatState & ChatActions;

const initialState: ChatState = {
  list: EMPTY_LIST,
  listStatus: 'idle',
  loadingMore: false,
  loadMoreFailed: false,
  archived: EMPTY_LIST,
  archivedStatus: 'idle',
  archivedLoadingMore: false,
  found: null,
  threads: {},
  pending: {},
  createdFor: {},
  drafts: {},
  errors: {},
  shownId: null,
  cancelling: {},
  options: {},
  deletedHere: {},
  focusRequest: 0,
  progress: {},
  imageSends: {},
  regenerating: {},
  edits: {},
};

export const DEFAULT_OPTIONS: ComposerOptions = { model: null, webSearch: false, deepSearch: false, imageGeneration: false };

// Bookkeeping of the list's first-page fetch: what frames changed while it ran.
let listRequest = 0;
let touchedDuringLoad = new Set<string>();
let deletedDuringLoad = new Set<string>();
let archivedRequest = 0;
let foundSeq = 0;
const threadRequests = new Map<string, number>();
/**
 * Conversations whose current message a frame (or this tab) moved while their REST load
 * ran: the load's `currentMessageId` may be older, and is not taken.
 */
const currentMovedDuringLoad = new Set<string>();
/**
 * The latest rating request of each answer, while one is in flight: only its answer
 * settles what the tab shows (an earlier request's answer or frame may come later).
 */
const ratingRequests = new Map<string, number>();
let ratingRequest = 0;
/** Conversations being fetched because a message arrived in one the list lacks. */
const fetchingListed = new Set<string>();

function omit<T>(record: Record<string, T>, key: string): Record<string, T> {
  if (!(key in record)) return record;
  const next = { ...record };
  delete next[key];
  return next;
}

export const useChatStore = create<ChatStore>()((set, get) => {
  const noteTouched = (id: string) => touchedDuringLoad.add(id);

  /** Applies `update` to a thread this tab has loaded; frames for others are dropped. */
  const updateThread = (id: string, update: (entry: ThreadEntry) => ThreadEntry) => {
    const entry = get().threads[id];
    if (!entry || entry.status === 'deleted') return;
    const next = update(entry);
    if (next !== entry) set((state) => ({ threads: { ...state.threads, [id]: next } }));
  };

  const withMessages = (entry: ThreadEntry, messages: Thread, activity = false): ThreadEntry => {
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

  /** The conversation's current message becomes `pick(entry)` (a loaded conversation only). */
  const moveCurrent = (id: string, pick: (entry: ThreadEntry) => string | null) => {
    updateThread(id, (entry) => {
      const currentId = pick(entry);
      return currentId === entry.currentId ? entry : { ...entry, currentId };
    });
    currentMovedDuringLoad.add(id);
  };

  /** A message arrived in a conversation the list does not have: fetch and list it. */
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
        if (deletedDuringLoad.has(id)) return;
        noteTouched(id);
        set((state) => ({ list: placeConversation(state.list, conversation) }));
      })
      .catch(() => undefined)
      .finally(() => fetchingListed.delete(id));
  };

  return {
    ...initialState,

    reset: () => {
      for (const send of Object.values(get().pending)) releaseSent(send.attachments);
      listRequest += 1;
      archivedRequest += 1;
      threadRequests.clear();
      currentMovedDuringLoad.clear();
      ratingRequests.clear();
      touchedDuringLoad = new Set();
      deletedDuringLoad = new Set();
      set(initialState);
    },

    loadConversations: async () => {
      const request = ++listRequest;
      touchedDuringLoad = new Set();
      deletedDuringLoad = new Set();
      set((state) => ({ listStatus: state.listStatus === 'ready' ? 'ready' : 'loading', loadMoreFailed: false }));
      try {
        const page = await chatApi.listConversations(null);
        if (request !== listRequest) return;
        set((state) => ({
          list: replaceWithFirstPage(
            state.list,
            { items: page.data, nextCursor: page.nextCursor },
            touchedDuringLoad,
            deletedDuringLoad,
          ),
          listStatus: 'ready',
        }));
      } catch {
        if (request === listRequest) set((state) => ({ listStatus: state.listStatus === 'ready' ? 'ready' : 'error' }));
      }
    },

    loadMoreConversations: async () => {
      const { list, loadingMore } = get();
      if (loadingMore || !list.nextCursor) return;
      const request = listRequest;
      set({ loadingMore: true, loadMoreFailed: false });
      try {
        const page = await chatApi.listConversations(list.nextCursor);
        if (request !== listRequest) return;
        set((state) => ({
          list: appendPage(state.list, {
            items: page.data.filter((c) => !deletedDuringLoad.has(c._id)),
            nextCursor: page.nextCursor,
          }),
        }));
      } catch {
        if (request === listRequest) set({ loadMoreFailed: true });
      } finally {
        if (request === listRequest) set({ loadingMore: false });
      }
    },

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

    send: ({
      conversationId,
      content,
      model,
      webSearch,
      deepSearch = false,
      imageGeneration = false,
      attachments = [],
      projectId = null,
      editOf = null,
    }) => {
      // A project only places a new conversation; an existing one stays where it is.
      const project = conversationId === null && projectId ? projectId : undefined;
      const key = conversationId ?? newChatKey(project);
      const clientId = randomId();
      const entry = conversationId ? get().threads[conversationId] : undefined;
      // As the server places it: an edit beside the question it replaces, else after
      // the current message.
      const edited = editOf ? entry?.messages.find((m) => m._id === editOf) : undefined;
      const parentId = edited ? edited.parentId : (entry?.currentId ?? null);
      const sent = chatSocket.emit('chat.send', {
        clientId,
        conversationId,
        content,
        model: model || null,
        // An image is made alone: the server refuses it with a web search (invalid_frame).
        // A deep search is a web search too.
        webSearch: !imageGeneration && (webSearch || deepSearch),
        deepSearch: !imageGeneration && deepSearch,
        imageGeneration,
        projectId: project ?? null,
        attachments: attachments.map((a) => a.file._id),
        editOf,
      });
      if (!sent) {
        // The composer keeps what was typed (an edit, its box).
        set((state) => ({ errors: { ...state.errors, [key]: { code: 'offline', ...(editOf ? {} : { resend: true }) } } }));
        return null;
      }
      const pending: PendingSend = {
        clientId,
        conversationId,
        content,
        attachments,
        ...(imageGeneration ? { imageGeneration: true } : deepSearch ? { deepSearch: true } : {}),
        ...(project ? { projectId: project } : {}),
        parentId,
        ...(editOf ? { editOf } : {}),
        createdAt: new Date().toISOString(),
      };
      set((state) => ({
        pending: { ...state.pending, [clientId]: pending },
        // An edit's text was in its own box: the composer's draft stays.
        drafts: editOf ? state.drafts : { ...state.drafts, [key]: '' },
        edits: editOf ? omit(state.edits, editOf) : state.edits,
        errors: { ...state.errors, [key]: undefined },
        // "Create image" is for one send, as its answer is an image, not a conversation.
        ...(imageGeneration
          ? {
              options: { ...state.options, [key]: { ...DEFAULT_OPTIONS, ...state.options[key], imageGeneration: false } },
              imageSends: Object.fromEntries([
                ...Object.entries(state.imageSends).slice(-(MAX_IMAGE_SENDS - 1)),
                [clientId, true as const],
              ]),
            }
          : // Deep search is for one send (it reserves several searches); web search stays on.
            deepSearch
            ? { options: { ...state.options, [key]: { ...DEFAULT_OPTIONS, ...state.options[key], webSearch: true, deepSearch: false } } }
            : {}),
      }));
      return clientId;
    },

    cancel: (conversationId) => {
      const sent = chatSocket.emit('chat.cancel', { conversationId });
      if (sent) set((state) => ({ cancelling: { ...state.cancelling, [conversationId]: true } }));
      else set((state) => ({ errors: { ...state.errors, [conversationId]: { code: 'offline' } } }));
      return sent;
    },

    selectVersion: (conversationId, messageId) => {
      const sent = chatSocket.emit('conversation.select', { conversationId, messageId });
      if (!sent) {
        set((state) => ({ errors: { ...state.errors, [conversationId]: { code: 'offline' } } }));
        return false;
      }
      // Shown here at once, as the server will pick it; its conversation.updated agrees.
      moveCurrent(conversationId, (entry) => newestBelow(entry.messages, messageId));
      return true;
    },

    regenerate: (conversationId, messageId, model) => {
      const clientId = randomId();
      const sent = chatSocket.emit('chat.regenerate', { clientId, conversationId, messageId, model: model || null });
      if (!sent) {
        set((state) => ({ errors: { ...state.errors, [conversationId]: { code: 'offline' } } }));
        return null;
      }
      set((state) => ({
        regenerating: { ...state.regenerating, [clientId]: { conversationId, messageId } },
        errors: { ...state.errors, [conversationId]: undefined },
      }));
      return clientId;
    },

    setEdit: (messageId, text) =>
      set((state) => ({ edits: text === undefined ? omit(state.edits, messageId) : { ...state.edits, [messageId]: text } })),

    rateAnswer: async (conversationId, messageId, rating, comment) => {
      const before = get().threads[conversationId]?.messages.find((m) => m._id === messageId)?.feedback ?? null;
      const shown: Feedback | null = rating ? { rating, comment: comment?.trim() || null } : null;
      const request = ++ratingRequest;
      ratingRequests.set(messageId, request);
      const settle = (feedback: Feedback | null) => {
        if (ratingRequests.get(messageId) !== request) return;
        ratingRequests.delete(messageId);
        updateThread(conversationId, (entry) => withMessages(entry, applyFeedback(entry.messages, messageId, feedback)));
      };
      updateThread(conversationId, (entry) => withMessages(entry, applyFeedback(entry.messages, messageId, shown)));
      try {
        const { data } = await chatApi.setFeedback(messageId, rating, comment);
        settle(data);
      } catch (error) {
        settle(before);
        throw error;
      }
    },

    rename: (id, title) => get().update(id, { title }),

    update: async (id, patch) => {
      const { data } = await chatApi.updateConversation(id, patch);
      get().onConversationUpdated({ conversation: data });
    },

    loadArchived: async () => {
      const request = ++archivedRequest;
      set((state) => ({ archivedStatus: state.archivedStatus === 'ready' ? 'ready' : 'loading' }));
      try {
        const page = await chatApi.listConversations(null, undefined, null, true);
        if (request !== archivedRequest) return;
        // A frame that came meanwhile is newer than the page: what it unarchived stays out.
        const items = page.data.filter((c) => c.archived);
        set({ archived: { items, nextCursor: page.nextCursor }, archivedStatus: 'ready' });
      } catch {
        if (request === archivedRequest) set((state) => ({ archivedStatus: state.archivedStatus === 'ready' ? 'ready' : 'error' }));
      }
    },

    loadMoreArchived: async () => {
      const { archived, archivedLoadingMore } = get();
      if (archivedLoadingMore || !archived.nextCursor) return;
      const request = archivedRequest;
      set({ archivedLoadingMore: true });
      try {
        const page = await chatApi.listConversations(archived.nextCursor, undefined, null, true);
        if (request !== archivedRequest) return;
        set((state) => ({ archived: appendPage(state.archived, { items: page.data, nextCursor: page.nextCursor }) }));
      } catch {
        // The button stays to try again.
      } finally {
        if (request === archivedRequest) set({ archivedLoadingMore: false });
      }
    },

    showFound: (conversationId, messageId) => set({ found: { conversationId, messageId, seq: ++foundSeq } }),

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

    // --- frames ---------------------------------------------------------------------

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

    onConversationCreated: ({ clientId, conversation }) => {
      noteTouched(conversation._id);
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
      noteTouched(conversation._id);
      // Archived: out of the list, and out of a first page being fetched with it too.
      if (conversation.archived) deletedDuringLoad.add(conversation._id);
      else deletedDuringLoad.delete(conversation._id);
      set((state) => ({
        list: placeConversation(state.list, conversation),
        archived: state.archivedStatus === 'idle' ? state.archived : placeConversation(state.archived, conversation, true),
      }));
      updateThread(conversation._id, (entry) => ({ ...entry, conversation }));
      // The branch shown moved (a version picked in some tab), or this says it again.
      moveCurrent(conversation._id, () => conversation.currentMessageId);
    },

    onConversationDeleted: ({ conversationId }) => {
      deletedDuringLoad.add(conversationId);
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
      noteTouched(conversationId);
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
});

/** Conversations came from elsewhere (an import): a list this tab has loaded is read again. */
export function refreshConversations(): void {
  if (useChatStore.getState().listStatus !== 'idle') void useChatStore.getState().loadConversations();
}
