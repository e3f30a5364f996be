/**
 * SPEC §5's card messages from Stripe's error codes. The same codes come from the card
 * element's `change` events (while typing) and from `confirmCardPayment` (Stripe.js checks
 * the fields again; the card's bank can answer `incorrect_cvc` or `expired_card`).
 */
import type { StripeError } from './stripe-js';

/** Keys under `card.errors` in the subscription texts. */
export type CardErrorKey = 'number' | 'cvc' | 'expiryFormat' | 'month' | 'expired';

const BY_CODE: Readonly<Record<string, CardErrorKey>> = {
  incomplete_number: 'number',
  invalid_number: 'number',
  incorrect_number: 'number',
  incomplete_cvc: 'cvc',
  invalid_cvc: 'cvc',
  incorrect_cvc: 'cvc',
  incomplete_expiry: 'expiryFormat',
  invalid_expiry_month: 'month',
  invalid_expiry_month_past: 'expired',
  invalid_expiry_year_past: 'expired',
  expired_card: 'expired',
  // The API's answer to a year it will not take; a two-digit year can only be wrong by
  // being in the past (localstripe sends it for any year before 2019).
  invalid_expiry_year: 'expired',
};

/** The message for an error the user can fix in the card fields; null for anything else. */
export function cardErrorKey(error: StripeError | null | undefined): CardErrorKey | null {
  const code = error?.code;
  return code !== undefined && Object.hasOwn(BY_CODE, code) ? BY_CODE[code]! : null;
}
