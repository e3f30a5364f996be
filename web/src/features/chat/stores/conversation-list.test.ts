import { describe, expect, it } from 'vitest';
import type { Conversation } from '@/types/generated';
import { conversation } from '@/test/chat-fixtures';
import {
  appendPage,
  EMPTY_LIST,
  placeConversation,
  removeConversation,
  replaceWithFirstPage,
  touchConversation,
  upsertConversation,
  type ConversationList,
} from './conversation-list';

const at = (minute: number) => `2025-03-14T10:${String(minute).padStart(2, '0')}:00.000+00:00`;
const c = (id: string, minute: number, title: string | null = null): Conversation =>
  conversation({ _id: id, updatedAt: at(minute), createdAt: at(minute), title });
const ids = (list: ConversationList) => list.items.map((item) => item._id);

describe('the conversation list', () => {
  it('keeps the newest activity first, then the larger id', () => {
    let list = EMPTY_LIST;
    list = upsertConversation(list, c('a', 1));
    list = upsertConversation(list, c('c', 3));
    list = upsertConversation(list, c('b', 3));
    expect(ids(list)).toEqual(['c', 'b', 'a']);
  });

  it('moves a conversation to the top when a message arrives in it', () => {
    const list = { items: [c('b', 5), c('a', 1)], nextCursor: null };
    expect(ids(touchConversation(list, 'a', at(9)))).toEqual(['a', 'b']);
    // An older time changes nothing.
    expect(touchConversation(list, 'b', at(2))).toBe(list);
  });

  it('replaces a renamed conversation in place (and moves it by its new time)', () => {
    const list = { items: [c('b', 5), c('a', 1)], nextCursor: null };
    const renamed = upsertConversation(list, c('a', 7, 'Python notes'));
    expect(ids(renamed)).toEqual(['a', 'b']);
    expect(renamed.items[0]!.title).toBe('Python notes');
  });

  it('does not insert a conversation that belongs to a page not loaded yet', () => {
    const list = { items: [c('c', 9), c('b', 8)], nextCursor: 'cursor' };
    expect(upsertConversation(list, c('old', 1, 'titled'))).toBe(list);
    expect(ids(upsertConversation(list, c('new', 10)))).toEqual(['new', 'c', 'b']);
  });

  it('removes deleted conversations', () => {
    const list = { items: [c('b', 5), c('a', 1)], nextCursor: null };
    expect(ids(removeConversation(list, 'b'))).toEqual(['a']);
    expect(removeConversation(list, 'zzz')).toBe(list);
  });

  it('appends the next page without duplicates, keeping the tab’s newer copy', () => {
    const list = { items: [c('c', 9), c('b', 8, 'mine')], nextCursor: 'x' };
    const next = appendPage(list, { items: [c('b', 8, 'older'), c('a', 2)], nextCursor: null });
    expect(ids(next)).toEqual(['c', 'b', 'a']);
    expect(next.items[1]!.title).toBe('mine');
    expect(next.nextCursor).toBeNull();
  });

  it('takes a fresh first page, keeping what frames changed meanwhile', () => {
    const current = { items: [c('new', 9), c('renamed', 4, 'Renamed'), c('gone', 3), c('stale', 2)], nextCursor: null };
    const page = { items: [c('renamed', 4, 'Old title'), c('gone', 3), c('other', 1)], nextCursor: 'next' };
    const list = replaceWithFirstPage(current, page, new Set(['new', 'renamed']), new Set(['gone']));
    expect(ids(list)).toEqual(['new', 'renamed', 'other']);
    expect(list.items[1]!.title).toBe('Renamed');
    expect(list.nextCursor).toBe('next');
  });

  it('keeps pinned conversations on top, newest first among them', () => {
    let list: ConversationList = { items: [c('c', 9), c('b', 5), c('a', 1)], nextCursor: null };
    list = upsertConversation(list, { ...c('a', 1), pinned: true });
    expect(ids(list)).toEqual(['a', 'c', 'b']);
    list = upsertConversation(list, { ...c('b', 5), pinned: true });
    expect(ids(list)).toEqual(['b', 'a', 'c']);
    // New activity in an unpinned one does not pass the pinned ones.
    list = touchConversation(list, 'c', at(30));
    expect(ids(list)).toEqual(['b', 'a', 'c']);
    // Unpinned, it goes back among the others by its activity.
    list = upsertConversation(list, { ...c('b', 5), pinned: false });
    expect(ids(list)).toEqual(['a', 'c', 'b']);
  });

  it('places a changed conversation in the main list or the archived one by its flag', () => {
    const main: ConversationList = { items: [c('b', 5), c('a', 1)], nextCursor: null };
    const archived: ConversationList = { items: [{ ...c('z', 2), archived: true }], nextCursor: null };
    const a = { ...c('a', 1), archived: true };
    expect(ids(placeConversation(main, a))).toEqual(['b']);
    expect(ids(placeConversation(archived, a, true))).toEqual(['z', 'a']);
    // Unarchived: back in the main list at its place, out of the archived one.
    const back = { ...a, archived: false };
    expect(ids(placeConversation(placeConversation(main, a), back))).toEqual(['b', 'a']);
    expect(ids(placeConversation(archived, back, true))).toEqual(['z']);
  });
});
