/**
 * The plan and usage counters the chat reads: the plan gates the composer's controls and
 * lists the models (`GET /api/subscription`, then `subscription.updated`); the usage shows
 * how many messages are left (`GET /api/usage/limits`, `ready`, then `usage.updated`).
 */
import { create } from 'zustand';
import type { Usage } from '@/types/api';
import { chatApi, planFromSubscription, usageFrom, type ChatPlan } from '../api/chat-api';

type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

export interface PlanState {
  plan: ChatPlan | null;
  planStatus: LoadStatus;
  usage: Usage | null;
  loadPlan: () => Promise<void>;
  loadUsage: () => Promise<void>;
  /** A `subscription.updated` frame's `subscription`. */
  applySubscription: (subscription: unknown) => void;
  /** A `ready` frame's `usage`, or a `usage.updated` frame. */
  applyUsage: (usage: unknown) => void;
  reset: () => void;
}

let planRequest = 0;
let usageRequest = 0;

export const usePlanStore = create<PlanState>()((set) => ({
  plan: null,
  planStatus: 'idle',
  usage: null,

  loadPlan: async () => {
    const request = ++planRequest;
    set((state) => ({ planStatus: state.plan ? state.planStatus : 'loading' }));
    try {
      const plan = planFromSubscription(await chatApi.getSubscription());
      if (request !== planRequest) return;
      set(plan ? { plan, planStatus: 'ready' } : { planStatus: 'error' });
    } catch {
      if (request === planRequest) set((state) => ({ planStatus: state.plan ? 'ready' : 'error' }));
    }
  },

  loadUsage: async () => {
    const request = ++usageRequest;
    try {
      const usage = usageFrom(await chatApi.getUsage());
      if (request === usageRequest && usage) set({ usage });
    } catch {
      // The counters are informative; the server enforces the limits anyway.
    }
  },

  applySubscription: (subscription) => {
    const plan = planFromSubscription(subscription);
    if (!plan) return;
    planRequest += 1; // a fetch in flight is older than this frame
    set({ plan, planStatus: 'ready' });
  },

  applyUsage: (value) => {
    const usage = usageFrom(value);
    if (!usage) return;
    usageRequest += 1;
    set({ usage });
  },

  reset: () => {
    planRequest += 1;
    usageRequest += 1;
    set({ plan: null, planStatus: 'idle', usage: null });
  },
}));
