/**
 * The user's plan catalogue, subscription, billing info and invoices. Loaded when a
 * subscription screen opens, kept current by the screens' socket events
 * (`subscription.updated`, `settings.updated`) and by the answers of the calls here.
 */
import { create } from 'zustand';
import { useAuthStore } from '@/features/auth';
import { subscriptionApi } from '../api/subscription-api';
import type { BillingInfo, BillingInfoInput, Invoice, Payment, Plan, SubscriptionState, VatInfo } from '../api/types';

export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

export interface SubscriptionStoreState {
  status: LoadStatus;
  plans: Plan[];
  /** The VAT rate this user pays (prices in `plans` include it). */
  vatRate: number;
  vat: VatInfo | null;
  subscription: SubscriptionState | null;
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
  /** Only the subscription, e.g. after a payment. */
  loadSubscription: () => Promise<SubscriptionState>;
  loadPayments: () => Promise<void>;
  loadInvoices: () => Promise<void>;
  /** The catalogue again: its VAT follows the billing info. */
  loadPlans: () => Promise<void>;
  applySubscription: (subscription: SubscriptionState) => void;
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
  billingInfo: undefined,
  payments: [],
  invoices: [],
  savingBillingInfo: false,
};

/** The answers carry `success` (and, for a change, `requiresPayment`): keep only the state. */
function subscriptionOf({ data, subscriptionPlan, pendingSubscription, pendingSubscriptionPlan }: SubscriptionState) {
  return { data, subscriptionPlan, pendingSubscription, pendingSubscriptionPlan };
}

export const useSubscriptionStore = create<SubscriptionStore>()((set, get) => ({
  ...initialSubscriptionState,

  load: async () => {
    set({ status: 'loading' });
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
        subscription: subscriptionOf(subscription),
        billingInfo,
        payments,
        invoices,
      });
    } catch (error) {
      set({ status: 'error' });
      throw error;
    }
  },

  loadSubscription: async () => {
    const subscription = subscriptionOf(await subscriptionApi.getSubscription());
    set({ subscription });
    return subscription;
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

  applySubscription: (subscription) => set({ subscription: subscriptionOf(subscription) }),

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

  reset: () => set(initialSubscriptionState),
}));

// Another account's plan and invoices must not show after a logout or a login elsewhere.
useAuthStore.subscribe((state, previous) => {
  if (state.user?._id !== previous.user?._id) useSubscriptionStore.getState().reset();
});
