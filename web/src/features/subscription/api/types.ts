/**
 * The plan, subscription and payment shapes this feature reads are the server's own
 * (`@/types/generated`); here are only what the client adds: the lists it walks in
 * order, and the bodies it sends.
 */
import type {
  Availability,
  BillingCycle,
  BillingType,
  Currency,
  Features,
  PaymentRequired,
  PlanLimits,
  PlanType,
  SubscriptionAnswer,
} from '@/types/generated';

export const PLAN_TYPES = ['free', 'base', 'plus', 'pro'] as const satisfies readonly PlanType[];

export const CURRENCIES = ['EUR', 'HUF'] as const satisfies readonly Currency[];

export type PlanFeature = keyof Features;

/** The order plan cards list the features in. */
export const PLAN_FEATURES = [
  'openaiWebSearch',
  'googleWebSearch',
  'documentProcessing',
  'imageGeneration',
  'projectManagement',
] as const satisfies readonly PlanFeature[];

export type PlanLimitName = keyof PlanLimits;
export const PLAN_LIMITS = ['responseLimit', 'webSearchLimit', 'imageGenerationLimit'] as const satisfies readonly PlanLimitName[];

/** Besides the plan features: several images per message (attachments). */
export type AvailabilityKey = keyof Availability;

export interface ChangePlanRequest {
  planType: PlanType;
  paymentMethod?: 'credit_card';
  billingCycle?: BillingCycle;
  currency?: Currency;
}

/** `PUT /api/subscription/change`: where to pay for an upgrade, or the subscription with its scheduled change. */
export type ChangePlanAnswer = PaymentRequired | SubscriptionAnswer;

/**
 * Whether a plan change waits for a payment. Both answers carry `requiresPayment` as a
 * plain boolean, so the payment itself tells them apart.
 */
export function isPaymentRequired(answer: ChangePlanAnswer): answer is PaymentRequired {
  return 'payment' in answer;
}

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
