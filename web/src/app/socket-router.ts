/**
 * The one place the socket's frames reach the app's state. Every frame type the server
 * sends (the generated `ServerFrame` union) and every event the socket raises itself
 * (`session.ended`) is listed in ROUTES with the slices that own a part of it, in the order
 * they are handed the frame, or as ignored with the reason. The map is typed over the
 * union, so a frame type the server adds fails to compile until it is routed or ignored.
 *
 * The slices' handlers live with their slices (`authFrames`, `subscriptionFrames`,
 * `chatFrames`, `projectFrames`, `answerNotificationFrames`); components that react to a
 * frame while mounted, without keeping state (a payment page waiting for its subscription),
 * use `useSocketEvent`.
 */
import { authFrames, useAuthStore } from '@/features/auth';
import { answerNotificationFrames, chatFrames } from '@/features/chat';
import { projectFrames } from '@/features/projects';
import { subscriptionFrames } from '@/features/subscription';
import { chatSocket } from '@/lib/socket';
import type { FrameContext, FrameHandler, SocketEventType } from '@/lib/socket-protocol';

/** A frame type no slice applies, and why. */
interface Ignored {
  ignored: string;
}

export type FrameRoutes = { [K in SocketEventType]: readonly FrameHandler<K>[] | Ignored };

export const ROUTES: FrameRoutes = {
  // The user and settings, the counters, and after a reconnect what each slice shows.
  ready: [authFrames.ready, subscriptionFrames.ready, chatFrames.ready, projectFrames.ready],
  // The conversation frames keep every list live: all conversations, and the project's.
  'conversation.created': [
    chatFrames['conversation.created'],
    projectFrames['conversation.created'],
    answerNotificationFrames['conversation.created'],
  ],
  'conversation.updated': [
    chatFrames['conversation.updated'],
    projectFrames['conversation.updated'],
    answerNotificationFrames['conversation.updated'],
  ],
  'conversation.deleted': [chatFrames['conversation.deleted'], projectFrames['conversation.deleted']],
  'conversation.opened': [chatFrames['conversation.opened']],
  'message.created': [chatFrames['message.created'], projectFrames['message.created']],
  'message.delta': [chatFrames['message.delta']],
  'message.snapshot': [chatFrames['message.snapshot']],
  'message.completed': [chatFrames['message.completed'], answerNotificationFrames['message.completed']],
  'message.feedback': [chatFrames['message.feedback']],
  'search.progress': [chatFrames['search.progress']],
  'file.updated': [chatFrames['file.updated'], projectFrames['file.updated']],
  'project.updated': [projectFrames['project.updated']],
  'project.deleted': [projectFrames['project.deleted']],
  error: [chatFrames.error],
  'usage.updated': [subscriptionFrames['usage.updated']],
  'subscription.updated': [subscriptionFrames['subscription.updated']],
  'profile.updated': [authFrames['profile.updated']],
  'settings.updated': [authFrames['settings.updated']],
  'session.ended': [authFrames['session.ended']],
  'session.revoked': { ignored: 'the socket itself decides: it reconnects, or raises session.ended' },
  pong: { ignored: "the socket's own heartbeat" },
};

let started = false;

/** Hands every frame to its slices, from now on, for the tab's life. Started once, at start-up. */
export function startSocketRouter(): void {
  if (started) return;
  started = true;

  // The first `ready` of a session follows the page's own REST loads, which missed
  // nothing; every later one is a reconnect that may have. A new user starts over.
  let connected = chatSocket.status === 'open';
  let userId = useAuthStore.getState().user?._id ?? null;
  useAuthStore.subscribe((state) => {
    const next = state.user?._id ?? null;
    if (next === userId) return;
    userId = next;
    connected = false;
  });

  const route = <K extends SocketEventType>(type: K, handlers: FrameRoutes[K]) => {
    if (!Array.isArray(handlers)) return;
    chatSocket.on(type, (frame) => {
      const context: FrameContext = { reconnect: false };
      if (type === 'ready') {
        context.reconnect = connected;
        connected = true;
      }
      for (const handler of handlers as readonly FrameHandler<K>[]) handler(frame, context);
    });
  };
  for (const type of Object.keys(ROUTES) as SocketEventType[]) route(type, ROUTES[type]);
}
