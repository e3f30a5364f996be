/**
 * The conversation list as pure functions: pinned ones first, then newest activity first
 * (`updatedAt`, then `_id`, both descending, as `GET /api/conversations` orders them),
 * paged by cursor, kept live by frames. The main list holds the conversations that are not
 * archived, the archived view the others (`?archived=true`).
 */
import type { Conversation } from '@/types/generated';

export interface ConversationList {
  items: readonly Conversation[];
  /** The cursor of the next page; null once the last page is loaded. */
  nextCursor: string | null;
}

export const EMPTY_LIST: ConversationList = { items: [], nextCursor: null };

/** Negative when `a` comes before `b` in the list. */
export function compareConversations(a: Conversation, b: Conversation): number {
  if (a.pinned !== b.pinned) return a.pinned ? -1 : 1;
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt ? -1 : 1;
  return a._id > b._id ? -1 : a._id < b._id ? 1 : 0;
}

function sortedItems(items: Conversation[]): Conversation[] {
  return items.sort(compareConversations);
}

/**
 * Whether a conversation belongs among the loaded ones: with more pages to load, one that
 * sorts after the last loaded item comes with its page instead.
 */
function withinLoadedRange(list: ConversationList, conversation: Conversation): boolean {
  if (list.nextCursor === null) return true;
  const last = list.items[list.items.length - 1];
  return !last || compareConversations(conversation, last) <= 0;
}

/** A conversation created or changed (a frame, a rename's answer, a fetched copy). */
export function upsertConversation(list: ConversationList, conversation: Conversation): ConversationList {
  const index = list.items.findIndex((c) => c._id === conversation._id);
  if (index === -1) {
    if (!withinLoadedRange(list, conversation)) return list;
    return { ...list, items: sortedItems([...list.items, conversation]) };
  }
  const items = list.items.slice();
  items[index] = conversation;
  return { ...list, items: sortedItems(items) };
}

/**
 * A conversation changed (pinned, archived, renamed…): it is in the list when its
 * `archived` flag is the list's (`archivedList`), at its place, and out of it otherwise.
 */
export function placeConversation(list: ConversationList, conversation: Conversation, archivedList = false): ConversationList {
  return conversation.archived === archivedList
    ? upsertConversation(list, conversation)
    : removeConversation(list, conversation._id);
}

export function removeConversation(list: ConversationList, id: string): ConversationList {
  if (!list.items.some((c) => c._id === id)) return list;
  return { ...list, items: list.items.filter((c) => c._id !== id) };
}

/** A message was created in it: its last activity moves to the message's time. */
export function touchConversation(list: ConversationList, id: string, at: string): ConversationList {
  const existing = list.items.find((c) => c._id === id);
  if (!existing || existing.updatedAt >= at) return list;
  return upsertConversation(list, { ...existing, updatedAt: at });
}

/** Appends the next page; a conversation the tab already has keeps the tab's (newer) copy. */
export function appendPage(list: ConversationList, page: ConversationList): ConversationList {
  const known = new Set(list.items.map((c) => c._id));
  return {
    items: sortedItems([...list.items, ...page.items.filter((c) => !known.has(c._id))]),
    nextCursor: page.nextCursor,
  };
}

/**
 * A fresh first page replaces the list. What frames changed while it was being fetched
 * wins over it: `touched` conversations keep the tab's copy, `deleted` ones stay out.
 */
export function replaceWithFirstPage(
  current: ConversationList,
  page: ConversationList,
  touched: ReadonlySet<string>,
  deleted: ReadonlySet<string>,
): ConversationList {
  const byId = new Map<string, Conversation>();
  for (const conversation of page.items) if (!deleted.has(conversation._id)) byId.set(conversation._id, conversation);
  for (const conversation of current.items) {
    if (!touched.has(conversation._id) || deleted.has(conversation._id)) continue;
    const fetched = byId.get(conversation._id);
    if (!fetched || compareConversations(conversation, fetched) <= 0) byId.set(conversation._id, conversation);
  }
  return { items: sortedItems([...byId.values()]), nextCursor: page.nextCursor };
}
