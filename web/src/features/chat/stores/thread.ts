/**
 * The messages of one conversation as the tab assembles them from REST and from frames
 * (docs/protocol.md "Resuming mid-stream"). Pure functions: each returns the same array
 * when nothing changed, so React skips the render.
 *
 * Per streaming answer the tab keeps `content` and `seq`, the last delta applied, or
 * null ("unknown") when the message came from REST or a gap was found:
 * - `message.created` (answer): content "", seq 0;
 * - `message.snapshot`: ignored once the answer is final, else replaces content and seq;
 * - `message.delta`: ignored for unknown messages, an unknown seq, seq ≤ the current one
 *   or a final message; appended at seq + 1; a larger seq is a gap: seq becomes unknown
 *   and the caller sends `conversation.open` again for a fresh snapshot;
 * - `message.completed`: replaces the message; final, later snapshots and deltas are
 *   ignored;
 * - a REST copy never overwrites a final, snapshotted or live copy, except with an
 *   ended answer (REST can be older than the socket, never ahead of an ended answer);
 *   an ended answer's feedback is the one thing REST still updates (rated in another
 *   tab while this one was away).
 *
 * The thread holds the messages of every branch: a conversation is a tree (`parentId`),
 * messages with the same parent are versions of one another, and the tab shows the
 * branch that ends at the conversation's current message (see `visiblePath`).
 */
import type { Feedback, Message } from '@/types/generated';

export interface ChatMessage extends Message {
  /** The last delta applied while streaming; null when unknown (wait for a snapshot). */
  seq: number | null;
  /** `message.completed` was applied, or REST showed the answer ended. */
  final: boolean;
  /** Created from a snapshot that came before the message itself was known. */
  stub?: boolean;
}

export type Thread = readonly ChatMessage[];

export const EMPTY_THREAD: Thread = [];

function compare(a: ChatMessage, b: ChatMessage): number {
  // A stub is the answer being written: always the newest message.
  if (a.stub !== b.stub) return a.stub ? 1 : -1;
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
}

function sorted(messages: ChatMessage[]): ChatMessage[] {
  return messages.sort(compare);
}

function replaceAt(thread: Thread, index: number, message: ChatMessage): Thread {
  const next = thread.slice();
  next[index] = message;
  return next;
}

function isEnded(message: Message): boolean {
  return message.status !== 'streaming';
}

/** A message as it arrives from REST or in a `message.created`/`completed` frame. */
export function fromServer(message: Message, live: boolean): ChatMessage {
  const ended = isEnded(message);
  return {
    ...message,
    // A live `message.created` answer starts at seq 0; REST does not know where it is.
    seq: ended ? null : live ? 0 : null,
    final: ended,
  };
}

/** Merges the messages of `GET /api/conversations/{id}` into what the tab has. */
export function applyRest(thread: Thread, messages: readonly Message[]): Thread {
  if (messages.length === 0) return thread;
  const next = thread.slice();
  let changed = false;
  for (const message of messages) {
    const index = next.findIndex((m) => m._id === message._id);
    if (index === -1) {
      next.push(fromServer(message, false));
      changed = true;
      continue;
    }
    const existing = next[index]!;
    if (existing.final) {
      if (!sameFeedback(existing.feedback, message.feedback)) {
        next[index] = { ...existing, feedback: message.feedback };
        changed = true;
      }
      continue;
    }
    if (isEnded(message)) {
      // The answer ended while this tab missed it (e.g. disconnected): REST is newer.
      next[index] = fromServer(message, false);
      changed = true;
    } else if (existing.stub) {
      // A snapshot came first: take the message's fields, keep the text and position.
      next[index] = { ...message, content: existing.content, seq: existing.seq, final: false };
      changed = true;
    }
    // Otherwise the tab's live copy is at least as new as REST's "streaming, empty".
  }
  return changed ? sorted(next) : thread;
}

export function applyCreated(thread: Thread, message: Message): Thread {
  const index = thread.findIndex((m) => m._id === message._id);
  if (index === -1) return sorted([...thread, fromServer(message, true)]);
  const existing = thread[index]!;
  if (existing.final) return thread;
  if (isEnded(message)) return replaceAt(thread, index, fromServer(message, true));
  if (existing.stub) {
    return sorted(replaceAt(thread, index, { ...message, content: existing.content, seq: existing.seq, final: false }).slice());
  }
  // Known from REST (seq unknown): the answer is just starting, no delta was sent yet.
  if (existing.seq === null) return replaceAt(thread, index, { ...existing, ...message, seq: 0, content: '' });
  return thread;
}

export interface SnapshotInput {
  conversationId: string;
  messageId: string;
  seq: number;
  content: string;
}

export function applySnapshot(thread: Thread, snapshot: SnapshotInput): Thread {
  const index = thread.findIndex((m) => m._id === snapshot.messageId);
  if (index === -1) {
    const stub: ChatMessage = {
      _id: snapshot.messageId,
      conversationId: snapshot.conversationId,
      role: 'assistant',
      content: snapshot.content,
      status: 'streaming',
      model: null,
      clientId: null,
      createdAt: '',
      attachments: [],
      sources: [],
      // Unknown until the message itself comes (REST or message.created).
      parentId: null,
      feedback: null,
      seq: snapshot.seq,
      final: false,
      stub: true,
    };
    return [...thread, stub];
  }
  const existing = thread[index]!;
  if (existing.final) return thread;
  return replaceAt(thread, index, { ...existing, status: 'streaming', content: snapshot.content, seq: snapshot.seq });
}

export interface DeltaInput {
  messageId: string;
  seq: number;
  delta: string;
}

export interface DeltaResult {
  thread: Thread;
  /** A delta was skipped: ask for a snapshot (`conversation.open`). */
  gap: boolean;
}

export function applyDelta(thread: Thread, delta: DeltaInput): DeltaResult {
  const index = thread.findIndex((m) => m._id === delta.messageId);
  if (index === -1) return { thread, gap: false };
  const existing = thread[index]!;
  if (existing.final || existing.seq === null || delta.seq <= existing.seq) return { thread, gap: false };
  if (delta.seq === existing.seq + 1) {
    return {
      thread: replaceAt(thread, index, { ...existing, content: existing.content + delta.delta, seq: delta.seq }),
      gap: false,
    };
  }
  return { thread: replaceAt(thread, index, { ...existing, seq: null }), gap: true };
}

export function applyCompleted(thread: Thread, message: Message): Thread {
  const completed: ChatMessage = { ...fromServer(message, true), final: true };
  const index = thread.findIndex((m) => m._id === message._id);
  if (index === -1) return sorted([...thread, completed]);
  return sorted(replaceAt(thread, index, completed).slice());
}

/**
 * After a reconnect frames were missed: every streaming answer's position is unknown
 * until a snapshot (for the shown conversation) or a reload.
 */
export function forgetStreamPositions(thread: Thread): Thread {
  if (!thread.some((m) => !m.final && m.seq !== null)) return thread;
  return thread.map((m) => (!m.final && m.seq !== null ? { ...m, seq: null } : m));
}

/** The answer being written in this conversation, if any. */
export function streamingMessage(thread: Thread): ChatMessage | undefined {
  for (let i = thread.length - 1; i >= 0; i -= 1) {
    const message = thread[i]!;
    if (message.role === 'assistant' && !message.final && message.status === 'streaming') return message;
  }
  return undefined;
}

function sameFeedback(a: Feedback | null, b: Feedback | null): boolean {
  return a === b || (a !== null && b !== null && a.rating === b.rating && a.comment === b.comment);
}

/** `message.feedback` (or this tab's own rating): the answer's feedback as it now is. */
export function applyFeedback(thread: Thread, messageId: string, feedback: Feedback | null): Thread {
  const index = thread.findIndex((m) => m._id === messageId);
  if (index === -1 || sameFeedback(thread[index]!.feedback, feedback)) return thread;
  return replaceAt(thread, index, { ...thread[index]!, feedback });
}

/**
 * The branch that ends at `leafId`, from the conversation's first question: the leaf,
 * its parent, and so on up, reversed. Empty for null; null when the leaf is not in the
 * thread (not loaded yet). A parent the thread lacks ends the walk.
 */
export function pathTo(thread: Thread, leafId: string | null): ChatMessage[] | null {
  if (leafId === null) return [];
  const byId = new Map(thread.map((m) => [m._id, m]));
  let message = byId.get(leafId);
  if (!message) return null;
  const path: ChatMessage[] = [];
  // A loop would be the server's bug; it must not hang the tab.
  const seen = new Set<string>();
  while (message && !seen.has(message._id)) {
    seen.add(message._id);
    path.push(message);
    message = message.parentId === null ? undefined : byId.get(message.parentId);
  }
  return path.reverse();
}

/**
 * What the tab shows of a conversation: the branch of its current message. Before the
 * current message is known (a conversation being created or loaded), or when it is not
 * in the thread yet, the branch of the newest message.
 */
export function visiblePath(thread: Thread, currentId: string | null): ChatMessage[] {
  const path = currentId === null ? null : pathTo(thread, currentId);
  if (path) return path;
  const last = thread[thread.length - 1];
  return last ? (pathTo(thread, last._id) ?? []) : [];
}

/** Where a message stands among its versions (the messages with its parent). */
export interface Versions {
  /** From 1, in creation order. */
  index: number;
  count: number;
  previous: string | null;
  next: string | null;
}

/**
 * Every message's place among its versions, by id. Stubs (answers known only from a
 * snapshot) have no known parent yet and are left out.
 */
export function versionIndex(thread: Thread): Map<string, Versions> {
  const groups = new Map<string | null, ChatMessage[]>();
  for (const message of thread) {
    if (message.stub) continue;
    const group = groups.get(message.parentId);
    if (group) group.push(message);
    else groups.set(message.parentId, [message]);
  }
  const index = new Map<string, Versions>();
  for (const group of groups.values()) {
    // The thread is sorted by creation already; siblings keep that order.
    group.forEach((message, i) =>
      index.set(message._id, {
        index: i + 1,
        count: group.length,
        previous: group[i - 1]?._id ?? null,
        next: group[i + 1]?._id ?? null,
      }),
    );
  }
  return index;
}

/**
 * The message a switch to `messageId` shows last, as the server picks it for
 * `conversation.select`: the newest message below it (itself when it has none). The
 * newest is always a leaf, as a reply is newer than what it follows.
 */
export function newestBelow(thread: Thread, messageId: string): string {
  const children = new Map<string, ChatMessage[]>();
  for (const message of thread) {
    if (message.parentId === null || message.stub) continue;
    const list = children.get(message.parentId);
    if (list) list.push(message);
    else children.set(message.parentId, [message]);
  }
  const start = thread.find((m) => m._id === messageId);
  if (!start) return messageId;
  let newest = start;
  const queue = [start];
  const seen = new Set<string>([start._id]);
  while (queue.length > 0) {
    const message = queue.pop()!;
    if (compare(message, newest) > 0) newest = message;
    for (const child of children.get(message._id) ?? []) {
      if (seen.has(child._id)) continue;
      seen.add(child._id);
      queue.push(child);
    }
  }
  return newest._id;
}

/**
 * Whether showing `messageId` (a search hit) needs another branch: it is in the
 * conversation but not on the branch shown. A message the tab does not know needs none.
 */
export function onOtherBranch(thread: Thread, currentId: string | null, messageId: string): boolean {
  if (!thread.some((m) => m._id === messageId)) return false;
  return !visiblePath(thread, currentId).some((m) => m._id === messageId);
}
