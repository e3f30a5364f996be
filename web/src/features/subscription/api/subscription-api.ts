/** The plan, subscription, billing and payment calls of docs/api.md, typed. */
import { api, apiBlob } from '@/lib/api-client';
import type {
  BillingInfoAnswer,
  Data,
  Invoice,
  Payment,
  PlansAnswer,
  SettingsAnswer,
  SubscriptionAnswer,
  UsageAnswer,
} from '@/types/generated';
import type { BillingInfoInput, ChangePlanAnswer, ChangePlanRequest } from './types';

/** Company-only fields are left out for private billing, which the server stores as null. */
export function billingInfoBody({ billingType, companyName, vatNumber, ...common }: BillingInfoInput) {
  const trimmed = Object.fromEntries(Object.entries(common).map(([key, value]) => [key, value.trim()]));
  return {
    billingType,
    billingInfo:
      billingType === 'company'
        ? { ...trimmed, companyName: companyName.trim(), vatNumber: vatNumber.trim() }
        : trimmed,
  };
}

export const subscriptionApi = {
  /** The catalogue; needs no session. */
  getPlans: () => api.get<PlansAnswer>('/plans'),

  getSubscription: () => api.get<SubscriptionAnswer>('/subscription'),

  /** The user's counters (`GET /api/usage/limits`). */
  getUsage: () => api.get<UsageAnswer>('/usage/limits'),

  /**
   * An upgrade answers where to pay; the same `idempotencyKey` never makes a second
   * payment. (The server decides by the plans' rank, so a downgrade can come back too.)
   */
  startCheckout: (body: ChangePlanRequest, idempotencyKey: string) =>
    api.put<ChangePlanAnswer>('/subscription/change', body, { headers: { 'Idempotency-Key': idempotencyKey } }),

  /** A downgrade: answers the subscription with its scheduled change; nothing is paid. */
  scheduleChange: (body: ChangePlanRequest) => api.put<ChangePlanAnswer>('/subscription/change', body),

  cancel: () => api.put<SubscriptionAnswer>('/subscription/cancel'),

  cancelPending: () => api.put<SubscriptionAnswer>('/subscription/cancel-pending'),

  /** The saved billing info; null when there is none. */
  getBillingInfo: () => api.get<SettingsAnswer>('/settings').then((answer) => answer.billingInfo ?? null),

  saveBillingInfo: (input: BillingInfoInput) =>
    api
      .put<BillingInfoAnswer>('/settings/billing-info', billingInfoBody(input))
      .then((answer) => answer.billingInfo),

  /** Every payment of the user, newest first: the invoices. */
  getPayments: () => api.get<Data<Payment[]>>('/payments').then((answer) => answer.data),

  /** The user's invoices, newest first. */
  getInvoices: () => api.get<Data<Invoice[]>>('/invoices').then((answer) => answer.data),

  /** The invoice's PDF; the request carries the token like every other call. */
  getInvoicePdf: (invoice: Invoice) => apiBlob(invoice.pdfUrl.replace(/^\/api/, '')),

  getPayment: (id: string) =>
    api.get<Data<Payment>>(`/payments/${encodeURIComponent(id)}`).then((answer) => answer.data),
};
