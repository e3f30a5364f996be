/**
 * The chat slice: one zustand store, its state (state.ts), the store's type and its parts'
 * interfaces (types.ts), the actions of the user and REST (actions.ts, send-actions.ts),
 * the socket frames it applies (frames.ts, and send-frames.ts for what settles this tab's
 * sends; both routed by the app's socket router) and the selectors components read it
 * with (selectors.ts).
 */
import { create } from 'zustand';
import { chatActions } from './actions';
import { createChatContext } from './context';
import { chatFrameHandlers } from './frames';
import { sendActions } from './send-actions';
import { sendFrameHandlers } from './send-frames';
import { initialState } from './state';
import type { ChatStore } from './types';

export const useChatStore = create<ChatStore>()((set, get) => {
  const ctx = createChatContext(set, get);
  return { ...initialState, ...chatActions(ctx), ...sendActions(ctx), ...chatFrameHandlers(ctx), ...sendFrameHandlers(ctx) };
});

/** Conversations came from elsewhere (an import): a list this tab has loaded is read again. */
export function refreshConversations(): void {
  if (useChatStore.getState().listStatus !== 'idle') void useChatStore.getState().loadConversations();
}

export type { ChatActions, ChatFrameHandlers, ChatStore, SendActions, SendFrameHandlers } from './types';
export {
  DEFAULT_OPTIONS,
  MAX_IMAGE_SENDS,
  MAX_PROGRESS_ENTRIES,
  NEW_CHAT,
  newChatKey,
  STALE_RECHECK_MS,
  type ChatError,
  type ChatState,
  type ComposerOptions,
  type FoundMessage,
  type PendingRegenerate,
  type PendingSend,
  type SendInput,
  type ThreadEntry,
} from './state';
export * from './selectors';
