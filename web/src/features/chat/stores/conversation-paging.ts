/**
 * Cursor paging of a conversation list, written once for every list that pages: all
 * conversations, the archived ones and a project's. It loads the first page (which
 * replaces the list) and the next ones (appended), drops answers that a newer load or a
 * reset overtook, and lets frames that came while a page was on its way win over it:
 * conversations they touched keep the tab's copy, ones they removed stay out.
 */
import type { Conversation, Page } from '@/types/generated';
import { appendPage, replaceWithFirstPage, type ConversationList } from './conversation-list';

export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

/** One paged list as the pager sees it (each store keeps these under its own names). */
export interface PagedList {
  list: ConversationList;
  status: LoadStatus;
  loadingMore: boolean;
  /** Only lists that show "could not load more" keep it. */
  loadMoreFailed?: boolean;
}

export interface ConversationPagerOptions {
  /** One page from the server: the first with a null cursor. */
  fetchPage: (cursor: string | null) => Promise<Page<Conversation>>;
  read: () => PagedList;
  write: (change: Partial<PagedList>) => void;
  /** Which conversations of a fetched first page belong (a frame may have moved one out meanwhile). */
  belongs?: (conversation: Conversation) => boolean;
}

/** The fields a store keeps its main list in (the chat's list and a project's alike). */
export interface ListFields {
  list: ConversationList;
  listStatus: LoadStatus;
  loadingMore: boolean;
  loadMoreFailed: boolean;
}

/** The pager's `read` and `write` over a store's {@link ListFields}. */
export function listFieldsAccess(
  get: () => ListFields,
  set: (change: Partial<ListFields>) => void,
): Pick<ConversationPagerOptions, 'read' | 'write'> {
  return {
    read: () => {
      const { list, listStatus, loadingMore, loadMoreFailed } = get();
      return { list, status: listStatus, loadingMore, loadMoreFailed };
    },
    write: ({ list, status, loadingMore, loadMoreFailed }) =>
      set({
        ...(list ? { list } : {}),
        ...(status ? { listStatus: status } : {}),
        ...(loadingMore !== undefined ? { loadingMore } : {}),
        ...(loadMoreFailed !== undefined ? { loadMoreFailed } : {}),
      }),
  };
}

export class ConversationPager {
  private request = 0;
  private touched = new Set<string>();
  private deleted = new Set<string>();

  constructor(private readonly options: ConversationPagerOptions) {}

  /** A frame (or this tab) changed it: a first page on its way keeps the tab's copy. */
  noteTouched(id: string): void {
    this.touched.add(id);
  }

  /** It left the list: pages on their way leave it out. */
  noteDeleted(id: string): void {
    this.deleted.add(id);
  }

  /** It belongs to the list again (unarchived, moved back). */
  noteRestored(id: string): void {
    this.deleted.delete(id);
  }

  wasDeleted(id: string): boolean {
    return this.deleted.has(id);
  }

  /** Answers on their way are of no use any more. */
  invalidate(): void {
    this.request += 1;
  }

  /** Forgets everything (a new user, a reset store). */
  reset(): void {
    this.invalidate();
    this.touched = new Set();
    this.deleted = new Set();
  }

  /** Loads the first page, which replaces the list. */
  async loadFirst(): Promise<void> {
    const { fetchPage, read, write, belongs } = this.options;
    const request = ++this.request;
    this.touched = new Set();
    this.deleted = new Set();
    write({ status: read().status === 'ready' ? 'ready' : 'loading', ...('loadMoreFailed' in read() ? { loadMoreFailed: false } : {}) });
    try {
      const page = await fetchPage(null);
      if (request !== this.request) return;
      const items = belongs ? page.data.filter(belongs) : page.data;
      write({
        list: replaceWithFirstPage(read().list, { items, nextCursor: page.nextCursor }, this.touched, this.deleted),
        status: 'ready',
      });
    } catch {
      if (request === this.request) write({ status: read().status === 'ready' ? 'ready' : 'error' });
    }
  }

  /** Loads the next page, if there is one and none is on its way. */
  async loadMore(): Promise<void> {
    const { fetchPage, read, write } = this.options;
    const { list, loadingMore } = read();
    if (loadingMore || !list.nextCursor) return;
    const request = this.request;
    const failable = 'loadMoreFailed' in read();
    write({ loadingMore: true, ...(failable ? { loadMoreFailed: false } : {}) });
    try {
      const page = await fetchPage(list.nextCursor);
      if (request !== this.request) return;
      write({
        list: appendPage(read().list, {
          items: page.data.filter((c) => !this.deleted.has(c._id)),
          nextCursor: page.nextCursor,
        }),
      });
    } catch {
      // The button stays to try again.
      if (request === this.request && failable) write({ loadMoreFailed: true });
    } finally {
      if (request === this.request) write({ loadingMore: false });
    }
  }
}
