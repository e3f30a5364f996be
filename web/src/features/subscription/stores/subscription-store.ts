/**
 * The user's subscription (with its plan) and usage counters, which every screen reads
 * from here: the chat gates its controls on the plan and shows the messages left, the
 * settings list the counters, the subscription screens manage the plan. Also the plan
 * catalogue, billing info and invoices of the subscription screens.
 *
 * REST loads it (the subscription at login, the rest when a screen opens); the frames
 * keep it current (subscription-frames.ts: `subscription.updated`, `usage.updated`, and
 * `ready`, which carries the counters), and so do the answers of the calls here. A frame
 * wins over a fetch that was already on its way when it came.
 */
import { create } from 'zustand';
import { useAuthStore } from '@/features/auth';
import type { BillingInfo, Invoice, Payment, Plan, Subscription, Usage, VatEstimate } from '@/types/generated';
import { subscriptionApi } from '../api/subscription-api';
import type { BillingInfoInput } from '../api/types';

export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

export interface SubscriptionStoreState {
  /** The subscription screens' load (catalogue, subscription, billing info, invoices). */
  status: LoadStatus;
  plans: Plan[];
  /** The VAT rate this user pays (prices in `plans` include it). */
  vatRate: number;
  vat: VatEstimate | null;
  subscription: Subscription | null;
  /** The subscription's own load: `loading` only until there is one, then `ready` through refreshes. */
  subscriptionStatus: LoadStatus;
  /** The counters of `GET /api/usage/limits`, `ready` and `usage.updated`. */
  usage: Usage | null;
  /** Like `subscriptionStatus`, for the counters. */
  usageStatus: LoadStatus;
  /** `undefined` until loaded; `null` when the user has saved none. */
  billingInfo: BillingInfo | null | undefined;
  payments: Payment[];
  invoices: Invoice[];
  /** A billing info save is on its way: an upgrade chosen now would not see it yet. */
  savingBillingInfo: boolean;
}

export interface SubscriptionStoreActions {
  /** Catalogue, subscription, billing info and invoices at once. */
  load: () => Promise<void>;
  /** Only the subscription (at login, after a payment, when its plan may be out of date). */
  loadSubscription: () => Promise<Subscription>;
  /** The counters; a failure leaves `usageStatus` at `error` (the server enforces the limits anyway). */
  loadUsage: () => Promise<void>;
  loadPayments: () => Promise<void>;
  loadInvoices: () => Promise<void>;
  /** The catalogue again: its VAT follows the billing info. */
  loadPlans: () => Promise<void>;
  /** A `subscription.updated` frame, or an answer that carries the subscription. */
  applySubscription: (subscription: Subscription) => void;
  /** A `ready` frame's `usage`, or a `usage.updated` frame. */
  applyUsage: (usage: Usage) => void;
  applyBillingInfo: (billingInfo: BillingInfo | null) => void;
  saveBillingInfo: (input: BillingInfoInput) => Promise<BillingInfo>;
  cancel: () => Promise<void>;
  cancelPending: () => Promise<void>;
  reset: () => void;
}

export type SubscriptionStore = SubscriptionStoreState & SubscriptionStoreActions;

export const initialSubscriptionState: SubscriptionStoreState = {
  status: 'idle',
  plans: [],
  vatRate: 0,
  vat: null,
  subscription: null,
  subscriptionStatus: 'idle',
  usage: null,
  usageStatus: 'idle',
  billingInfo: undefined,
  payments: [],
  invoices: [],
  savingBillingInfo: false,
};

/** The answers carry `success` (and, for a change, `requiresPayment`): keep only the subscription. */
function subscriptionOf({ data, subscriptionPlan, pendingSubscription, pendingSubscriptionPlan }: Subscription): Subscription {
  return { data, subscriptionPlan, pendingSubscription, pendingSubscriptionPlan };
}

function usageOf({ hasActiveLimit, limitInfo }: Usage): Usage {
  return { hasActiveLimit, limitInfo };
}

// Bumped by every frame and every answer applied: a fetch that started before is older.
let subscriptionVersion = 0;
let usageVersion = 0;

export const useSubscriptionStore = create<SubscriptionStore>()((set, get) => ({
  ...initialSubscriptionState,

  load: async () => {
    set({ status: 'loading' });
    const version = subscriptionVersion;
    try {
      const [plans, subscription, billingInfo, payments, invoices] = await Promise.all([
        subscriptionApi.getPlans(),
        subscriptionApi.getSubscription(),
        subscriptionApi.getBillingInfo(),
        subscriptionApi.getPayments(),
        subscriptionApi.getInvoices(),
      ]);
      set({
        status: 'ready',
        plans: plans.data,
        vatRate: plans.vatRate,
        vat: plans.vat,
        billingInfo,
        payments,
        invoices,
      });
      if (version === subscriptionVersion) get().applySubscription(subscription);
    } catch (error) {
      set({ status: 'error' });
      throw error;
    }
  },

  loadSubscription: async () => {
    const version = subscriptionVersion;
    set((state) => ({ subscriptionStatus: state.subscription ? state.subscriptionStatus : 'loading' }));
    try {
      const answer = await subscriptionApi.getSubscription();
      if (version === subscriptionVersion) get().applySubscription(answer);
      // A frame came meanwhile: what it said is newer than this answer.
      return get().subscription ?? subscriptionOf(answer);
    } catch (error) {
      if (version === subscriptionVersion) {
        set((state) => ({ subscriptionStatus: state.subscription ? 'ready' : 'error' }));
      }
      throw error;
    }
  },

  loadUsage: async () => {
    const version = usageVersion;
    set((state) => ({ usageStatus: state.usage ? state.usageStatus : 'loading' }));
    try {
      const answer = await subscriptionApi.getUsage();
      if (version === usageVersion) get().applyUsage(answer);
    } catch {
      // Server and network failures were toasted; a screen that shows the counters offers a retry.
      if (version === usageVersion) set((state) => ({ usageStatus: state.usage ? 'ready' : 'error' }));
    }
  },

  loadPayments: async () => {
    set({ payments: await subscriptionApi.getPayments() });
  },

  loadInvoices: async () => {
    set({ invoices: await subscriptionApi.getInvoices() });
  },

  loadPlans: async () => {
    const plans = await subscriptionApi.getPlans();
    set({ plans: plans.data, vatRate: plans.vatRate, vat: plans.vat });
  },

  applySubscription: (subscription) => {
    subscriptionVersion += 1;
    set({ subscription: subscriptionOf(subscription), subscriptionStatus: 'ready' });
  },

  applyUsage: (usage) => {
    usageVersion += 1;
    set({ usage: usageOf(usage), usageStatus: 'ready' });
  },

  applyBillingInfo: (billingInfo) => set({ billingInfo }),

  saveBillingInfo: async (input) => {
    set({ savingBillingInfo: true });
    try {
      const billingInfo = await subscriptionApi.saveBillingInfo(input);
      set({ billingInfo });
      // The cards' VAT follows the new country; the save stands even if this fails.
      void get().loadPlans().catch(() => undefined);
      return billingInfo;
    } finally {
      set({ savingBillingInfo: false });
    }
  },

  cancel: async () => get().applySubscription(await subscriptionApi.cancel()),

  cancelPending: async () => get().applySubscription(await subscriptionApi.cancelPending()),

  reset: () => {
    // Answers still on their way belong to the previous user.
    subscriptionVersion += 1;
    usageVersion += 1;
    set(initialSubscriptionState);
  },
}));

/** The plan in effect, or null until the subscription is known. */
export const selectPlan = (state: SubscriptionStoreState): Plan | null => state.subscription?.subscriptionPlan ?? null;

// Another account's plan, counters and invoices must not show after a logout or a login elsewhere.
useAuthStore.subscribe((state, previous) => {
  if (state.user?._id !== previous.user?._id) useSubscriptionStore.getState().reset();
});
