/**
 * The console's state: the users table and the audit log (paged lists that keep their
 * filters while the admin opens a user and comes back), and the user page's detail,
 * which every action replaces with the server's new state.
 */
import { create } from 'zustand';
import { errorMessage } from '@/lib/api-client';
import type { AdminUserDetail, AuditEntry, AdminUserRow, PlanType } from '@/types/generated';
import { adminApi, type AuditFilters, type RefundRequest, type ResetService, type UserFilters } from '../api/admin-api';
import { createPagedStore } from './paged-store';

export const EMPTY_USER_FILTERS: UserFilters = { q: '', plan: '', status: '' };

export const useAdminUsersStore = createPagedStore<AdminUserRow, UserFilters>(EMPTY_USER_FILTERS, adminApi.listUsers);

export const useAuditStore = createPagedStore<AuditEntry, AuditFilters>({}, adminApi.listAudit);

export interface AdminUserState {
  /** The user the page shows; a detail of another user is never shown under this one's id. */
  id: string | null;
  detail: AdminUserDetail | null;
  status: 'idle' | 'loading' | 'ready' | 'error';
  error: string | null;
}

export interface AdminUserActions {
  load: (id: string) => Promise<void>;
  /** The actions reject with the server's error (the dialog shows it) and change nothing then. */
  setPlan: (planType: PlanType, days: number | undefined, reason: string) => Promise<void>;
  setSuspended: (suspended: boolean, reason: string) => Promise<void>;
  resetUsage: (service: ResetService, reason: string) => Promise<void>;
  /** `idempotencyKey`: one per opening of the refund dialog. */
  refund: (paymentId: string, request: RefundRequest, idempotencyKey: string) => Promise<void>;
  reset: () => void;
}

const initialUser: AdminUserState = { id: null, detail: null, status: 'idle', error: null };

export const useAdminUserStore = create<AdminUserState & AdminUserActions>()((set, get) => {
  /** The id the page shows now; throws if none (an action needs a loaded user). */
  const currentId = () => {
    const { id } = get();
    if (!id) throw new Error('no user loaded');
    return id;
  };
  /** Applies a detail only if the page still shows that user. */
  const apply = (id: string, detail: AdminUserDetail) => {
    if (get().id === id) set({ detail, status: 'ready', error: null });
  };
  /** After an action whose answer is not the whole page: the new state, audit row included. */
  const reread = async (id: string) => {
    try {
      apply(id, await adminApi.getUser(id));
    } catch (failure) {
      // The action itself succeeded: its dialog must not say otherwise. The page says
      // that what it shows may be out of date.
      if (get().id === id) set({ error: errorMessage(failure) });
    }
  };

  return {
    ...initialUser,

    load: async (id) => {
      set({ id, status: 'loading', error: null, ...(get().detail?.user._id === id ? {} : { detail: null }) });
      try {
        apply(id, await adminApi.getUser(id));
      } catch (failure) {
        if (get().id === id) set({ status: 'error', error: errorMessage(failure) });
      }
    },

    setPlan: async (planType, days, reason) => {
      const id = currentId();
      const body = days === undefined ? { planType, reason } : { planType, days, reason };
      apply(id, await adminApi.setPlan(id, body));
    },

    setSuspended: async (suspended, reason) => {
      const id = currentId();
      await adminApi.setSuspended(id, { suspended, reason });
      await reread(id);
    },

    resetUsage: async (service, reason) => {
      const id = currentId();
      const usage = await adminApi.resetUsage(id, { service, reason });
      const { detail } = get();
      if (detail && get().id === id) set({ detail: { ...detail, usage } });
      await reread(id);
    },

    refund: async (paymentId, request, idempotencyKey) => {
      const id = currentId();
      await adminApi.refund(paymentId, request, idempotencyKey);
      await reread(id);
    },

    reset: () => set(initialUser),
  };
});
