/**
 * The dashboard's figures for the range it shows. Kept while the admin looks at a user and
 * comes back (shown at once, then read afresh); an answer for a range the admin has since
 * left is dropped, so a slow request never overwrites a newer one.
 */
import { create } from 'zustand';
import { errorMessage } from '@/lib/api-client';
import type { AdminStats } from '@/types/generated';
import { adminApi, type StatsQuery } from '../api/admin-api';

export interface StatsState {
  query: StatsQuery | null;
  stats: AdminStats | null;
  status: 'idle' | 'loading' | 'ready' | 'error';
  error: string | null;
}

export interface StatsActions {
  load: (query: StatsQuery) => Promise<void>;
  reset: () => void;
}

const initial: StatsState = { query: null, stats: null, status: 'idle', error: null };

const same = (a: StatsQuery | null, b: StatsQuery) => !!a && a.from === b.from && a.to === b.to && a.tz === b.tz;

export const useStatsStore = create<StatsState & StatsActions>()((set, get) => ({
  ...initial,

  load: async (query) => {
    // Figures of another range are not shown under this one while it loads.
    set({ query, status: 'loading', error: null, ...(same(get().query, query) ? {} : { stats: null }) });
    try {
      const stats = await adminApi.getStats(query);
      if (get().query === query) set({ stats, status: 'ready' });
    } catch (failure) {
      if (get().query === query) set({ status: 'error', error: errorMessage(failure) });
    }
  },

  reset: () => set(initial),
}));
