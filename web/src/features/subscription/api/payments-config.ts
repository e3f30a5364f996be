/** `GET /api/payments/config`: which provider takes the payment, and how the browser reaches it. */
import { api } from '@/lib/api-client';
import type { Data, PaymentConfig } from '@/types/generated';

let cached: Promise<PaymentConfig> | null = null;

/** Asked once per page load (the server's settings do not change under it); a failure is asked again. */
export function getPaymentsConfig(): Promise<PaymentConfig> {
  if (!cached) {
    const request = api.get<Data<PaymentConfig>>('/payments/config').then((answer) => answer.data);
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
