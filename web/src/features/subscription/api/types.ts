/** The plan, subscription and payment shapes of docs/api.md, as this feature reads them. */
import type { BillingInfo, BillingType, PlanType } from '@/types/api';

export type { BillingInfo, BillingType, PlanType };

export const PLAN_TYPES = ['free', 'base', 'plus', 'pro'] as const satisfies readonly PlanType[];

export type Currency = 'EUR' | 'HUF';
export const CURRENCIES = ['EUR', 'HUF'] as const satisfies readonly Currency[];

export type BillingCycle = 'monthly' | 'one_time';

/** `credit_card` is the only method the server takes; `operator` marks a plan set by the operator command. */
export type PaymentMethod = 'credit_card' | 'operator';

export type PlanFeature =
  | 'googleWebSearch'
  | 'openaiWebSearch'
  | 'documentProcessing'
  | 'projectManagement'
  | 'imageGeneration';

export const PLAN_FEATURES = [
  'openaiWebSearch',
  'googleWebSearch',
  'documentProcessing',
  'imageGeneration',
  'projectManagement',
] as const satisfies readonly PlanFeature[];

/** A daily and a monthly cap; `null` is unlimited, `0` not available on the plan. */
export interface PlanLimit {
  daily: number | null;
  monthly: number | null;
}

export type PlanLimitName = 'responseLimit' | 'webSearchLimit' | 'imageGenerationLimit';
export const PLAN_LIMITS = ['responseLimit', 'webSearchLimit', 'imageGenerationLimit'] as const satisfies readonly PlanLimitName[];

/** Amounts in major units (6.35 EUR, 1905 HUF). */
export interface Price {
  net: number;
  vat: number;
  total: number;
}

/** Besides the plan features: several images per message (attachments). */
export type AvailabilityKey = PlanFeature | 'imageUpload';

export interface Plan {
  planType: PlanType;
  name: string;
  /** The place in the plan order: a higher rank is an upgrade. */
  rank: number;
  features: Record<PlanFeature, boolean>;
  /** Whether each feature works in this build yet; cards offer only what does. */
  available: Record<AvailabilityKey, boolean>;
  limits: Record<PlanLimitName, PlanLimit>;
  maxImagesPerMessage: number;
  chatModels: string[];
  models: Record<string, string>;
  /** One month, or one one-time period, in each currency. */
  prices: Record<Currency, Price>;
}

export type VatTreatment = 'standard' | 'reverse_charge' | 'outside_eu';

/** The VAT the caller pays: from their billing info, else the seller's country's rate. */
export interface VatInfo {
  rate: number;
  treatment: VatTreatment;
  basis: 'billingInfo' | 'seller';
  country: string;
}

export interface PlansAnswer {
  success: true;
  data: Plan[];
  vatRate: number;
  vat: VatInfo;
}

export interface Subscription {
  _id: string;
  /** The plan in effect now. */
  planType: PlanType;
  status: 'active';
  startDate: string;
  /** The end of the paid period; null on free. */
  endDate: string | null;
  billingCycle: BillingCycle | null;
  paymentMethod: PaymentMethod | null;
  currency: Currency | null;
  /** Monthly with nothing scheduled. */
  autoRenew: boolean;
  /** The scheduled change is to free (a cancel, or a downgrade to free). */
  cancelAtPeriodEnd: boolean;
}

export interface PendingSubscription {
  planType: PlanType;
  /** Always the current `endDate`. */
  activationDate: string;
  requestedAt: string;
}

/** `GET /api/subscription`, and the body of a `subscription.updated` frame. */
export interface SubscriptionState {
  data: Subscription;
  subscriptionPlan: Plan;
  pendingSubscription: PendingSubscription | null;
  pendingSubscriptionPlan: Plan | null;
}

export type PaymentStatus = 'pending' | 'succeeded' | 'failed' | 'canceled';

export interface Payment {
  _id: string;
  planType: PlanType;
  billingCycle: BillingCycle;
  kind: 'checkout' | 'renewal';
  status: PaymentStatus;
  currency: Currency;
  netAmount: number;
  vatRate: number;
  vatAmount: number;
  vatTreatment: VatTreatment;
  totalAmount: number;
  paymentMethod: PaymentMethod;
  provider: string;
  createdAt: string;
  completedAt: string | null;
}

/** `GET /api/invoices`: one per paid payment, amounts in major units. */
export interface Invoice {
  _id: string;
  /** `2026-000123`: gap-free per year. */
  number: string;
  issuedAt: string;
  paymentId: string;
  planType: PlanType;
  planName: string;
  billingCycle: BillingCycle;
  periodStart: string;
  periodEnd: string;
  currency: Currency;
  netAmount: number;
  vatRate: number;
  vatAmount: number;
  totalAmount: number;
  vatTreatment: VatTreatment;
  /** Needs the session: fetched with the token, not opened as a plain link. */
  pdfUrl: string;
}

export interface ChangePlanRequest {
  planType: PlanType;
  paymentMethod?: 'credit_card';
  billingCycle?: BillingCycle;
  currency?: Currency;
}

export type ChangePlanAnswer =
  | {
      success: true;
      requiresPayment: true;
      payment: Payment;
      /** The demo provider's checkout page; null with Stripe. */
      checkoutUrl: string | null;
      /**
       * Stripe: the PaymentIntent the card form confirms; null (or absent) with the demo
       * provider, and when a Stripe upgrade was charged to the saved card already.
       */
      clientSecret?: string | null;
    }
  | ({ success: true; requiresPayment: false } & SubscriptionState);

/** The billing form's fields; company-only fields are sent for company billing only. */
export interface BillingInfoInput {
  billingType: BillingType;
  name: string;
  companyName: string;
  address: string;
  city: string;
  postalCode: string;
  country: string;
  vatNumber: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * `subscription.updated` carries the subscription untyped (src/lib/socket-protocol.ts): a
 * frame that does not look like one is ignored rather than trusted.
 */
export function isSubscriptionState(value: unknown): value is SubscriptionState {
  if (!isObject(value) || !isObject(value.data) || !isObject(value.subscriptionPlan)) return false;
  return (
    (PLAN_TYPES as readonly unknown[]).includes(value.data.planType) &&
    (value.pendingSubscription === null || isObject(value.pendingSubscription))
  );
}
