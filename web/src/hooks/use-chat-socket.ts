import { useEffect, useLayoutEffect, useMemo, useRef, useSyncExternalStore } from 'react';
import { chatSocket, type SocketStatus } from '@/lib/socket';
import type { ClientFrameType, ClientFrames, SocketEventMap, SocketEventType } from '@/lib/socket-protocol';

export interface ChatSocketApi {
  status: SocketStatus;
  /** False when not connected; see ChatSocket.emit. */
  emit: <K extends ClientFrameType>(type: K, payload: ClientFrames[K]) => boolean;
  on: <K extends SocketEventType>(type: K, listener: (payload: SocketEventMap[K]) => void) => () => void;
  openConversation: (conversationId: string) => () => void;
}

/** The tab's socket, with its status as React state (re-renders on connect/disconnect). */
export function useChatSocket(): ChatSocketApi {
  const status = useSyncExternalStore(chatSocket.subscribeStatus, chatSocket.getStatus);
  return useMemo(
    () => ({
      status,
      emit: (type, payload) => chatSocket.emit(type, payload),
      on: (type, listener) => chatSocket.on(type, listener),
      openConversation: (conversationId) => chatSocket.openConversation(conversationId),
    }),
    [status],
  );
}

/**
 * Subscribes to one frame type for the component's lifetime. The latest `handler` is
 * always called, so callers need not memoise it.
 */
export function useSocketEvent<K extends SocketEventType>(
  type: K,
  handler: (payload: SocketEventMap[K]) => void,
): void {
  const latest = useRef(handler);
  useLayoutEffect(() => {
    latest.current = handler;
  });
  useEffect(() => chatSocket.on(type, (payload) => latest.current(payload)), [type]);
}

/**
 * Marks a conversation as shown while the component is mounted, so its streaming answer
 * resumes now and after every reconnect (`conversation.open`).
 */
export function useOpenConversation(conversationId: string | null | undefined): void {
  useEffect(() => (conversationId ? chatSocket.openConversation(conversationId) : undefined), [conversationId]);
}
