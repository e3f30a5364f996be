/**
 * Feeds the socket's frames into the chat's stores. Started once, when the chat is first
 * shown, and kept for the tab's life, so the list and loaded conversations stay live on
 * other pages too; a change of user (logout, another login) empties the stores.
 */
import { useAuthStore } from '@/features/auth';
import { useSubscriptionStore } from '@/features/subscription';
import { chatSocket } from '@/lib/socket';
import type { ErrorCode } from '@/types/generated';
import { setConversationTitleLookup } from '../lib/answer-notifications';
import { useAttachmentStore } from './attachments';
import { useChatStore } from './chat';
import { useProjectStore } from './project-store';

let started = false;

/**
 * Codes after which the plan this tab knows may be out of date (`search_unavailable`: the
 * server's search providers, in the plan's `available`, are not what this tab was told).
 */
const PLAN_CHANGED_CODES = new Set<string>(['model_not_allowed', 'premium_required', 'search_unavailable'] satisfies ErrorCode[]);

export function startChatSync(): void {
  if (started) return;
  started = true;
  const chat = () => useChatStore.getState();
  const subscription = () => useSubscriptionStore.getState();
  const projects = () => useProjectStore.getState();
  // A notification's title: the conversation as this tab's list or thread knows it.
  setConversationTitleLookup(
    (id) => chat().list.items.find((c) => c._id === id)?.title ?? chat().threads[id]?.conversation?.title,
  );

  // The first `ready` of a session follows the page's own REST loads, which missed
  // nothing; every later one is a reconnect that may have.
  let connected = chatSocket.status === 'open';
  // (The plan and the counters are the subscription feature's, which follows their frames.)
  chatSocket.on('ready', () => {
    if (!connected) {
      connected = true;
      // Except a document uploaded before this first socket was ready (a slow connect):
      // the frames of its reading went to no tab of ours, so one still shown as being
      // read is asked for once.
      void useAttachmentStore.getState().refreshProcessing();
      const { selectedId, files } = projects();
      if (selectedId && files[selectedId]?.some((f) => f.status === 'processing')) void projects().loadFiles(selectedId);
      return;
    }
    chat().onReady();
    projects().onReady();
    // file.updated may have been missed too: documents still being read are asked for.
    void useAttachmentStore.getState().refreshProcessing();
  });
  // The conversation frames keep both lists live: all conversations, and the project's.
  chatSocket.on('conversation.created', (frame) => {
    chat().onConversationCreated(frame);
    projects().onConversationCreated(frame);
  });
  chatSocket.on('conversation.updated', (frame) => {
    chat().onConversationUpdated(frame);
    projects().onConversationUpdated(frame);
  });
  chatSocket.on('conversation.deleted', (frame) => {
    chat().onConversationDeleted(frame);
    projects().onConversationDeleted(frame);
  });
  chatSocket.on('project.updated', (frame) => projects().onProjectUpdated(frame));
  chatSocket.on('project.deleted', (frame) => projects().onProjectDeleted(frame));
  chatSocket.on('conversation.opened', (frame) => chat().onConversationOpened(frame));
  chatSocket.on('message.created', (frame) => {
    chat().onMessageCreated(frame);
    projects().onMessageCreated(frame);
  });
  chatSocket.on('message.snapshot', (frame) => chat().onMessageSnapshot(frame));
  chatSocket.on('message.completed', (frame) => chat().onMessageCompleted(frame));
  // An answer rated (or its rating taken back) in any tab.
  chatSocket.on('message.feedback', (frame) => chat().onMessageFeedback(frame));
  // A web search's steps, before and between its answer's text (not stored, not replayed).
  chatSocket.on('search.progress', (frame) => chat().onSearchProgress(frame));
  chatSocket.on('message.delta', (frame) => {
    // A gap (frames lost between instances): ask for a snapshot and wait for it.
    if (chat().onMessageDelta(frame)) chatSocket.emit('conversation.open', { conversationId: frame.conversationId });
  });
  // A document being read: its progress and end, for whichever composer or project holds it.
  chatSocket.on('file.updated', ({ file }) => {
    useAttachmentStore.getState().onFileUpdated(file);
    projects().onFileUpdated(file);
  });
  chatSocket.on('error', (frame) => {
    chat().onError(frame);
    if (PLAN_CHANGED_CODES.has(frame.code)) void subscription().loadSubscription().catch(() => undefined);
  });

  let userId = useAuthStore.getState().user?._id ?? null;
  useAuthStore.subscribe((state) => {
    const next = state.user?._id ?? null;
    if (next === userId) return;
    userId = next;
    connected = false;
    chat().reset();
    projects().reset();
    // Another user must not find the previous one's pictures in the composer.
    useAttachmentStore.getState().reset();
  });
}
