/** The plan, subscription, billing and payment calls of docs/api.md, typed. */
import { toast } from '@/components/toast';
import { useAuthStore } from '@/features/auth';
import { API_BASE, ApiError, ERROR_TOAST_TIMEOUT, api } from '@/lib/api-client';
import { currentLanguage, i18n } from '@/lib/i18n';
import { getToken } from '@/lib/token';
import type {
  BillingInfo,
  BillingInfoInput,
  ChangePlanAnswer,
  ChangePlanRequest,
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

/**
 * `PUT /api/subscription/change` with its `Idempotency-Key`, which `api.put` cannot send
 * (the api-client takes no headers). It behaves as the api-client does: a 5xx or a network
 * failure is toasted, a 401 ends the session, and every failure rejects with an ApiError.
 */
async function putWithIdempotencyKey<T>(path: string, body: unknown, key: string): Promise<T> {
  const headers = new Headers({
    Accept: 'application/json',
    'Accept-Language': currentLanguage(),
    'Content-Type': 'application/json',
    'Idempotency-Key': key,
  });
  const token = getToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    const error = new ApiError({ status: 0, code: 'network_error', message: i18n.t('errors:networkError') });
    toast.negative(error.message, { timeout: ERROR_TOAST_TIMEOUT, position: 'top' });
    throw error;
  }
  const text = await response.text().catch(() => '');
  let payload: Partial<{ code: unknown; message: unknown; field: unknown }> = {};
  try {
    payload = text ? (JSON.parse(text) as typeof payload) : {};
  } catch {
    // Not JSON: the fallbacks below apply.
  }
  if (response.ok) return payload as T;
  const code = typeof payload.code === 'string' ? payload.code : 'unknown_error';
  if (response.status >= 500) {
    const message = i18n.t('errors:serverError');
    toast.negative(message, { timeout: ERROR_TOAST_TIMEOUT, position: 'top' });
    throw new ApiError({ status: response.status, code, message });
  }
  if (response.status === 401) useAuthStore.getState().expireSession();
  const message = typeof payload.message === 'string' && payload.message.trim() ? payload.message : '';
  throw new ApiError({
    status: response.status,
    code,
    message: message || i18n.t('errors:generic'),
    fromServer: message !== '',
    field: typeof payload.field === 'string' ? payload.field : undefined,
  });
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
    putWithIdempotencyKey<ChangePlanAnswer>('/subscription/change', body, idempotencyKey),

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

  getPayment: (id: string) =>
    api.get<{ success: true; data: Payment }>(`/payments/${encodeURIComponent(id)}`).then((answer) => answer.data),
};
