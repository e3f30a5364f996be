/**
 * The websocket frames (actors/src/protocol.rs, docs/protocol.md). Each key is a frame's
 * `type`; the value is the rest of the frame.
 */
import type {
  BillingInfo,
  Conversation,
  LimitInfo,
  Message,
  Project,
  StoredFile,
  User,
  UserSettings,
  Usage,
} from '@/types/api';

export type RevokeReason = 'password_changed' | 'password_reset' | 'account_deleted' | 'token_invalid';
export type FinishReason = 'stop' | 'cancelled' | 'error';
export type SearchStage = 'searching' | 'reading' | 'reflecting' | 'writing';

/** Frames the server sends. */
export interface ServerFrames {
  ready: { user: User; usage: Usage };
  'conversation.created': { clientId: string; conversation: Conversation };
  'message.created': { conversationId: string; clientId: string | null; message: Message };
  'message.delta': { conversationId: string; messageId: string; seq: number; delta: string };
  /** Answers `conversation.open`: whether an answer is streaming (its snapshot, if so, came just before). */
  'conversation.opened': { conversationId: string; streaming: boolean };
  'message.snapshot': { conversationId: string; messageId: string; seq: number; content: string };
  'message.completed': { conversationId: string; message: Message; finishReason: FinishReason };
  'conversation.updated': { conversation: Conversation };
  'conversation.deleted': { conversationId: string };
  /**
   * A project was created or changed: its name, instructions, documents (added), or how
   * many conversations it holds (one moved in or out). Sent to every tab.
   */
  'project.updated': { project: Project };
  /**
   * A project was deleted. Its conversations came first: each as `conversation.deleted`
   * when deleted with it, else as `conversation.updated` with `projectId: null`.
   */
  'project.deleted': { projectId: string };
  /** Same shape as `ready`'s `usage` and `GET /api/usage/limits`. */
  'usage.updated': { hasActiveLimit: boolean; limitInfo: LimitInfo };
  /** The user's name or profile image changed (in any tab or device). */
  'profile.updated': { user: User };
  'settings.updated': { settings: UserSettings; billingInfo: BillingInfo | null };
  /**
   * The whole `GET /api/subscription` answer. Left untyped here: its shape belongs to the
   * subscription feature, which narrows it.
   */
  'subscription.updated': { subscription: unknown };
  'session.revoked': { reason: RevokeReason };
  /**
   * A document's processing moved on or ended (every tab of the user; also for files
   * this tab did not upload, and possibly before the upload's own answer).
   */
  'file.updated': { file: StoredFile };
  /**
   * A step of the web search (or deep search) that prepares an answer, sent to every tab
   * of the user before and between the answer's text. Never stored, not replayed on
   * reconnect; it may come before the answer's `message.created`.
   */
  'search.progress': {
    conversationId: string;
    messageId: string;
    stage: SearchStage;
    /** Only on `searching`: what is searched for. */
    queries?: string[];
    /** Only on `reading`: how many pages are read. */
    pages?: number;
    round: number;
    rounds: number;
    /** A deep search (its steps are listed, not only the latest). */
    deep: boolean;
  };
  error: {
    clientId?: string;
    code: string;
    message: string;
    /** The field or period the error is about (`day` or `month` for `limit_reached`). */
    field?: string;
  };
  pong: Record<string, never>;
}

/** Frames the client sends (besides `auth`, which the socket module sends itself). */
export interface ClientFrames {
  'chat.send': {
    /** The tab's own id for this send; every frame it causes carries it back. */
    clientId: string;
    /** null starts a new conversation. */
    conversationId: string | null;
    content: string;
    model?: string | null;
    webSearch?: boolean;
    /** Several rounds of searching and reading ending in a report with sources; sent with `webSearch: true`. */
    deepSearch?: boolean;
    /** Answer with an image made from the message; never with `webSearch` or `deepSearch` (`invalid_frame`). */
    imageGeneration?: boolean;
    /** The project a new conversation starts in (ignored with a `conversationId`). */
    projectId?: string;
    /**
     * Ids of files uploaded with `POST /api/files`: at most the plan's
     * `maxImagesPerMessage` images and 10 documents, every document ready.
     */
    attachments?: string[];
  };
  'chat.cancel': { conversationId: string };
  'conversation.open': { conversationId: string };
  ping: Record<string, never>;
}

/** Events the socket module raises itself, delivered through the same `on()`. */
export interface SocketEvents {
  /**
   * This tab's session is over: its token was revoked (password changed elsewhere, reset,
   * account deleted) or refused. The socket has stopped; the app logs out.
   */
  'session.ended': { reason: RevokeReason | 'unauthorized' };
}

export type ServerFrameType = keyof ServerFrames;
export type ClientFrameType = keyof ClientFrames;
export type SocketEventMap = ServerFrames & SocketEvents;
export type SocketEventType = keyof SocketEventMap;
export type ServerFrame = { [K in ServerFrameType]: { type: K } & ServerFrames[K] }[ServerFrameType];
