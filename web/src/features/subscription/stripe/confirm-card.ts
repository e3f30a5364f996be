import { cardErrorKey } from './card-errors';
import type { BillingDetails, MountedCard, StripeError } from './stripe-js';

export type CardPaymentOutcome =
  /** Stripe took the card (after 3-D Secure, where asked); our server still has to hear it from Stripe. */
  | { kind: 'confirmed' }
  /** Something in the card fields to correct; the same payment can be confirmed again. */
  | { kind: 'fixCard'; error: StripeError }
  /** Declined, authentication failed, or anything else: this attempt is over. */
  | { kind: 'failed'; error: StripeError };

export async function confirmCard(
  card: MountedCard,
  clientSecret: string,
  billingDetails: BillingDetails,
): Promise<CardPaymentOutcome> {
  const { error } = await card.stripe.confirmCardPayment(clientSecret, {
    payment_method: { card: card.element, billing_details: billingDetails },
  });
  if (!error) return { kind: 'confirmed' };
  return cardErrorKey(error) ? { kind: 'fixCard', error } : { kind: 'failed', error };
}
