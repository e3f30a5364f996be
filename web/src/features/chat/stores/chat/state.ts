/**
 * The chat's state: the conversation list, the messages of the conversations this tab
 * has loaded, the sends in flight, drafts and errors per conversation. What changes it:
 * actions.ts and send-actions.ts (the user, REST), frames.ts (the socket's frames).
 */
import type { AppErrorCode } from '@/lib/error-codes';
import type { Conversation } from '@/types/generated';
import type { SearchProgress } from '../../lib/search-progress';
import type { SentAttachment } from '../attachments';
import { EMPTY_LIST, type ConversationList } from '../conversation-list';
import type { LoadStatus } from '../conversation-paging';
import type { Thread } from '../thread';

export const NEW_CHAT = 'new';

/**
 * The key of a new chat's drafts, errors, options and files: a new chat in a project
 * keeps its own, so what is typed there is not sent outside the project (or the reverse).
 */
export function newChatKey(projectId: string | null | undefined): string {
  return projectId ? `${NEW_CHAT}:${projectId}` : NEW_CHAT;
}

/** Where a send's draft and errors live: its conversation, or the new chat it started from. */
export function sendKey(send: Pick<PendingSend, 'conversationId' | 'projectId'>): string {
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

export const initialState: ChatState = {
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

export function omit<T>(record: Record<string, T>, key: string): Record<string, T> {
  if (!(key in record)) return record;
  const next = { ...record };
  delete next[key];
  return next;
}
