/**
 * The websocket frames the chat listens to, as docs/protocol.md and the server
 * (actors/src/protocol.rs) define them. `@/lib/socket-protocol` lacks
 * `conversation.opened`, puts `hasActiveLimit` of `usage.updated` in the wrong place and
 * has no `field` on `error`, so the chat reads frames through its own types here.
 */
import { chatSocket } from '@/lib/socket';
import type { Conversation, Message } from '@/types/api';

export type FinishReason = 'stop' | 'cancelled' | 'error';

export interface ChatFrames {
  ready: { user: unknown; usage: unknown };
  'conversation.created': { clientId: string; conversation: Conversation };
  'conversation.updated': { conversation: Conversation };
  'conversation.deleted': { conversationId: string };
  'conversation.opened': { conversationId: string; streaming: boolean };
  'message.created': { conversationId: string; clientId: string | null; message: Message };
  'message.delta': { conversationId: string; messageId: string; seq: number; delta: string };
  'message.snapshot': { conversationId: string; messageId: string; seq: number; content: string };
  'message.completed': { conversationId: string; message: Message; finishReason: FinishReason };
  'usage.updated': { hasActiveLimit?: boolean; limitInfo: unknown };
  'subscription.updated': { subscription: unknown };
  error: { clientId?: string; code: string; message: string; field?: string };
}

export type ChatFrameType = keyof ChatFrames;

interface LooseSocket {
  on(type: string, listener: (payload: unknown) => void): () => void;
}

/** Listens to one frame type on the tab's socket; returns the unsubscribe function. */
export function onChatFrame<K extends ChatFrameType>(type: K, listener: (frame: ChatFrames[K]) => void): () => void {
  return (chatSocket as unknown as LooseSocket).on(type, listener as (payload: unknown) => void);
}
