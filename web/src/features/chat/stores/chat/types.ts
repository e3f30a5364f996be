/**
 * The store's shape: its state (state.ts) with the actions of the user and REST
 * (actions.ts, send-actions.ts) and the socket frames it applies (frames.ts,
 * send-frames.ts). The interfaces live here, apart from the code that builds them, so
 * that context.ts (which every part imports) can type `set`/`get` without importing a
 * part: the slice's imports go one way (index.ts -> parts -> context.ts -> types.ts).
 */
import type { ServerFrames } from '@/lib/socket-protocol';
import type { Rating } from '@/types/generated';
import type { ConversationPatch } from '../../api/chat-api';
import type { ChatError, ChatState, ComposerOptions, SendInput } from './state';

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
}

export interface SendActions {
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
}

export interface ChatFrameHandlers {
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
}

export interface SendFrameHandlers {
  /** A reconnect (`ready` after the first): what was missed is loaded again. */
  onReady: () => void;
  onError: (frame: ServerFrames['error']) => void;
}

export type ChatStore = ChatState & ChatActions & SendActions & ChatFrameHandlers & SendFrameHandlers;
