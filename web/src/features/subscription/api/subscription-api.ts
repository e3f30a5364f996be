/** The plan, subscription, billing and payment calls of docs/api.md, typed. */
import { api, apiBlob } from '@/lib/api-client';
import type {
  BillingInfo,
  BillingInfoInput,
  ChangePlanAnswer,
  ChangePlanRequest,
  Invoice,
  Payment,
  PlansAnswer,
  SubscriptionState,
} from './types';

type SubscriptionAnswer = SubscriptionState & { success: true };

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

  getBillingInfo: () =>
    api.get<{ success: true; billingInfo: BillingInfo | null }>('/settings').then((answer) => answer.billingInfo),

  saveBillingInfo: (input: BillingInfoInput) =>
    api
      .put<{ success: true; billingInfo: BillingInfo }>('/settings/billing-info', billingInfoBody(input))
      .then((answer) => answer.billingInfo),

  /** Every payment of the user, newest first: the invoices. */
  getPayments: () => api.get<{ success: true; data: Payment[] }>('/payments').then((answer) => answer.data),

  /** The user's invoices, newest first. */
  getInvoices: () => api.get<{ success: true; data: Invoice[] }>('/invoices').then((answer) => answer.data),

  /** The invoice's PDF; the request carries the token like every other call. */
  getInvoicePdf: (invoice: Invoice) => apiBlob(invoice.pdfUrl.replace(/^\/api/, '')),

  getPayment: (id: string) =>
    api.get<{ success: true; data: Payment }>(`/payments/${encodeURIComponent(id)}`).then((answer) => answer.data),
};
