/** `GET /api/payments/config`: which provider takes the payment, and how the browser reaches it. */
import { api } from '@/lib/api-client';

export interface PaymentsConfig {
  provider: 'stripe' | 'demo';
  /** Set for Stripe. */
  publishableKey: string | null;
  /** Where Stripe.js is loaded from (Stripe's, or a fake in tests); set for Stripe. */
  jsUrl: string | null;
}

let cached: Promise<PaymentsConfig> | null = null;

/** Asked once per page load (the server's settings do not change under it); a failure is asked again. */
export function getPaymentsConfig(): Promise<PaymentsConfig> {
  if (!cached) {
    const request = api.get<{ success: true; data: PaymentsConfig }>('/payments/config').then((answer) => answer.data);
    cached = request;
    request.catch(() => {
      if (cached === request) cached = null;
    });
  }
  return cached;
}

/** Tests start each case without the cached answer. */
export function forgetPaymentsConfig() {
  cached = null;
}
