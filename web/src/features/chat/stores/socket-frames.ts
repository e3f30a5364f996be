/**
 * The frames the chat's slices apply, for the app's socket router: each one handed to the
 * chat store (stores/chat/frames.ts) and the composer's files (stores/attachments/frames.ts).
 * Frames keep the list and the loaded conversations live on every page, not only the chat's.
 */
import { useSubscriptionStore } from '@/features/subscription';
import { chatSocket } from '@/lib/socket';
import type { SliceFrames } from '@/lib/socket-protocol';
import type { ErrorCode } from '@/types/generated';
import { useAttachmentStore } from './attachments';
import { useChatStore } from './chat';

/**
 * Codes after which the plan this tab knows may be out of date (`search_unavailable`: the
 * server's search providers, in the plan's `available`, are not what this tab was told).
 */
const PLAN_CHANGED_CODES = new Set<string>(['model_not_allowed', 'premium_required', 'search_unavailable'] satisfies ErrorCode[]);

const chat = () => useChatStore.getState();
const attachments = () => useAttachmentStore.getState();

export type ChatFrameType =
  | 'ready'
  | 'conversation.created'
  | 'conversation.updated'
  | 'conversation.deleted'
  | 'conversation.opened'
  | 'message.created'
  | 'message.delta'
  | 'message.snapshot'
  | 'message.completed'
  | 'message.feedback'
  | 'search.progress'
  | 'file.updated'
  | 'error';

export const chatFrames: SliceFrames<ChatFrameType> = {
  ready: (_frame, { reconnect }) => {
    // Frames were missed while disconnected: the chat reloads what it shows.
    if (reconnect) chat().onReady();
    // file.updated may have been missed too: documents still being read are asked for.
    // (On the first connection too: a document uploaded before this first socket was
    // ready, on a slow connect, had its reading's frames go to no tab of ours.)
    void attachments().refreshProcessing();
  },
  'conversation.created': (frame) => chat().onConversationCreated(frame),
  'conversation.updated': (frame) => chat().onConversationUpdated(frame),
  'conversation.deleted': (frame) => chat().onConversationDeleted(frame),
  'conversation.opened': (frame) => chat().onConversationOpened(frame),
  'message.created': (frame) => chat().onMessageCreated(frame),
  'message.delta': (frame) => {
    // A gap (frames lost between instances): ask for a snapshot and wait for it.
    if (chat().onMessageDelta(frame)) chatSocket.emit('conversation.open', { conversationId: frame.conversationId });
  },
  'message.snapshot': (frame) => chat().onMessageSnapshot(frame),
  'message.completed': (frame) => chat().onMessageCompleted(frame),
  // An answer rated (or its rating taken back) in any tab.
  'message.feedback': (frame) => chat().onMessageFeedback(frame),
  // A web search's steps, before and between its answer's text (not stored, not replayed).
  'search.progress': (frame) => chat().onSearchProgress(frame),
  // A document being read: its progress and end, for whichever composer holds it.
  'file.updated': ({ file }) => attachments().onFileUpdated(file),
  error: (frame) => {
    chat().onError(frame);
    if (PLAN_CHANGED_CODES.has(frame.code)) void useSubscriptionStore.getState().loadSubscription().catch(() => undefined);
  },
};

/** A change of user (logout, another login): the previous one's chat and files are emptied. */
export function resetChatStores(): void {
  chat().reset();
  // Another user must not find the previous one's pictures in the composer.
  attachments().reset();
}
