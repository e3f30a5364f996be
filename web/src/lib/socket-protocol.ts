/**
 * The websocket frames (docs/protocol.md), as the server's contract types them
 * (`@/types/generated`: `ServerFrame`, `ClientFrame`, generated from contract/src/frames.rs).
 * Listeners are keyed by a frame's `type` and get the rest of the frame.
 */
import type { ClientFrame, ServerFrame } from '@/types/generated';

export type { ClientFrame, ServerFrame };

export type ServerFrameType = ServerFrame['type'];
export type ClientFrameType = ClientFrame['type'];

/** Each server frame by its `type`, without the `type`. */
export type ServerFrames = { [K in ServerFrameType]: Omit<Extract<ServerFrame, { type: K }>, 'type'> };

/** Each client frame by its `type`, without the `type` (`auth` is sent by the socket module itself). */
export type ClientFrames = { [K in ClientFrameType]: Omit<Extract<ClientFrame, { type: K }>, 'type'> };

/**
 * Why the server ended a session (`session.revoked`'s `reason`, docs/protocol.md). The
 * contract sends it as a plain string; these are the reasons the client acts on.
 */
export type RevokeReason = 'password_changed' | 'password_reset' | 'account_deleted' | 'account_suspended' | 'token_invalid';

/** Events the socket module raises itself, delivered through the same `on()`. */
export interface SocketEvents {
  /**
   * This tab's session is over: its token was revoked (password changed elsewhere, reset,
   * account deleted) or refused. The socket has stopped; the app logs out.
   */
  'session.ended': { reason: RevokeReason | 'unauthorized' };
}

export type SocketEventMap = ServerFrames & SocketEvents;
export type SocketEventType = keyof SocketEventMap;

/** What the socket router tells a handler besides the frame. */
export interface FrameContext {
  /**
   * For `ready`: whether this is a reconnect (frames may have been missed since the last
   * connection) rather than the first connection of the session, which follows the
   * page's own REST loads.
   */
  reconnect: boolean;
}

/** A slice's handler of one frame type (or socket event), called by the app's socket router. */
export type FrameHandler<K extends SocketEventType> = (frame: SocketEventMap[K], context: FrameContext) => void;

/** The frame handlers a slice offers the router: one for each of the types `K` it owns a part of. */
export type SliceFrames<K extends SocketEventType> = { [P in K]: FrameHandler<P> };

/**
 * Every frame type the server sends. A `Record` over the union, so a frame added to the
 * contract fails to compile here until it is listed; frames of any other type (from a
 * newer server) are dropped unread.
 */
const SERVER_FRAME_TYPES: Record<ServerFrameType, true> = {
  ready: true,
  'conversation.created': true,
  'message.created': true,
  'message.delta': true,
  'conversation.opened': true,
  'message.snapshot': true,
  'message.completed': true,
  'conversation.updated': true,
  'message.feedback': true,
  'conversation.deleted': true,
  'usage.updated': true,
  'profile.updated': true,
  'settings.updated': true,
  'subscription.updated': true,
  'session.revoked': true,
  'file.updated': true,
  'project.updated': true,
  'project.deleted': true,
  'search.progress': true,
  error: true,
  pong: true,
};

/**
 * A parsed websocket message as a frame, or null when it is none. The server is trusted
 * for the shape of a frame it sends (one contract builds both), so only the `type` is
 * looked at: what is not an object with a known `type` is not a frame.
 */
export function asServerFrame(value: unknown): ServerFrame | null {
  if (typeof value !== 'object' || value === null || !('type' in value)) return null;
  const { type } = value;
  return typeof type === 'string' && Object.hasOwn(SERVER_FRAME_TYPES, type) ? (value as ServerFrame) : null;
}
