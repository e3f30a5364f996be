/**
 * How components read the chat's state: one selector a question, so a component
 * re-renders only when its answer changes (each returns a value from the state, or a
 * primitive, never a new object).
 */
import type { Conversation } from '@/types/generated';
import type { ChatError, ComposerOptions, FoundMessage, ThreadEntry } from './state';
import type { ChatStore } from './types';

type Selector<T> = (state: ChatStore) => T;

/** A loaded conversation's thread entry; undefined when not loaded (or no id). */
export const selectThread =
  (conversationId: string | null): Selector<ThreadEntry | undefined> =>
  (s) =>
    conversationId ? s.threads[conversationId] : undefined;

/** The composer's draft (keyed by conversation id, or a new chat's key). */
export const selectDraft =
  (key: string): Selector<string> =>
  (s) =>
    s.drafts[key] ?? '';

export const selectError =
  (key: string): Selector<ChatError | undefined> =>
  (s) =>
    s.errors[key];

/** The composer's choices as stored; undefined until changed (then `DEFAULT_OPTIONS` apply). */
export const selectOptions =
  (key: string): Selector<ComposerOptions | undefined> =>
  (s) =>
    s.options[key];

/** Whether this tab asked to stop the conversation's answer and it has not ended yet. */
export const selectStopping =
  (conversationId: string | null): Selector<boolean> =>
  (s) =>
    conversationId ? s.cancelling[conversationId] === true : false;

/** The search hit to show in this conversation, if one is waiting. */
export const selectFound =
  (conversationId: string | null): Selector<FoundMessage | null> =>
  (s) =>
    conversationId && s.found?.conversationId === conversationId ? s.found : null;

/** Whether one of this tab's regenerates is running in the conversation. */
export const selectRegenerating =
  (conversationId: string | null): Selector<boolean> =>
  (s) =>
    Object.values(s.regenerating).some((r) => r.conversationId === conversationId);

/** The conversation as the main list has it (it may be newer than the thread's copy). */
export const selectListed =
  (conversationId: string | null): Selector<Conversation | undefined> =>
  (s) =>
    conversationId ? s.list.items.find((c) => c._id === conversationId) : undefined;

/** The text of a question being edited in place; undefined when its box is closed. */
export const selectEdit =
  (messageId: string | null | undefined): Selector<string | undefined> =>
  (s) =>
    messageId ? s.edits[messageId] : undefined;
