/**
 * A paged list behind filters (the users table, the audit log): `search` starts over with
 * new filters, `loadMore` appends the page after `nextCursor`. An answer to an older
 * search (the admin kept typing) is dropped, so the list always matches the filters shown.
 */
import { create } from 'zustand';
import { errorMessage } from '@/lib/api-client';
import type { Page } from '../api/admin-api';

export type PagedStatus = 'idle' | 'loading' | 'ready' | 'error';

export interface PagedState<T, F> {
  filters: F;
  rows: T[];
  nextCursor: string | null;
  /** The first page's load. */
  status: PagedStatus;
  loadingMore: boolean;
  /** The inline text of the last failure (null when the client already toasted it). */
  error: string | null;
}

export interface PagedActions<F> {
  search: (filters: F) => Promise<void>;
  loadMore: () => Promise<void>;
  reset: () => void;
}

export type PagedStore<T, F> = PagedState<T, F> & PagedActions<F>;

export function createPagedStore<T, F>(initialFilters: F, fetchPage: (filters: F, cursor: string | null) => Promise<Page<T>>) {
  const initial: PagedState<T, F> = {
    filters: initialFilters,
    rows: [],
    nextCursor: null,
    status: 'idle',
    loadingMore: false,
    error: null,
  };
  // Bumped by every search: answers carry the number they were asked under.
  let generation = 0;

  return create<PagedStore<T, F>>()((set, get) => ({
    ...initial,

    search: async (filters) => {
      const mine = ++generation;
      set({ filters, status: 'loading', error: null, loadingMore: false });
      try {
        const page = await fetchPage(filters, null);
        if (mine !== generation) return;
        set({ rows: page.data, nextCursor: page.nextCursor, status: 'ready' });
      } catch (failure) {
        if (mine !== generation) return;
        set({ status: 'error', error: errorMessage(failure) });
      }
    },

    loadMore: async () => {
      const { nextCursor, filters, loadingMore } = get();
      if (!nextCursor || loadingMore) return;
      const mine = generation;
      set({ loadingMore: true, error: null });
      try {
        const page = await fetchPage(filters, nextCursor);
        if (mine !== generation) return;
        set((state) => ({ rows: [...state.rows, ...page.data], nextCursor: page.nextCursor, loadingMore: false }));
      } catch (failure) {
        if (mine !== generation) return;
        set({ loadingMore: false, error: errorMessage(failure) });
      }
    },

    reset: () => {
      generation++;
      set(initial);
    },
  }));
}
