/**
 * The part of Stripe.js (https://docs.stripe.com/js) the card form uses, typed here rather
 * than through a package: the script itself must come from `jsUrl` (Stripe's, or a fake in
 * tests), so only its shape is ours. localstripe's fake implements the same calls.
 */

export interface StripeError {
  /** `validation_error` (checked in the browser), `card_error` (the bank said no), … */
  type?: string;
  code?: string;
  decline_code?: string;
  message?: string;
}

export interface StripeCardChangeEvent {
  complete?: boolean;
  empty?: boolean;
  error?: StripeError;
}

/** Colours and fonts for the text inside Stripe's iframe, which cannot see our CSS. */
export interface StripeElementStyle {
  base?: Record<string, string | Record<string, string>>;
  invalid?: Record<string, string>;
}

export interface StripeCardElement {
  mount(domElement: HTMLElement): void;
  destroy(): void;
  /** localstripe's fake calls the handler without an event. */
  on(event: 'change', handler: (event?: StripeCardChangeEvent) => void): void;
  /** Missing in localstripe's fake. */
  update?(options: { style: StripeElementStyle }): void;
}

export interface StripeElements {
  create(type: 'card', options?: { style?: StripeElementStyle; hidePostalCode?: boolean }): StripeCardElement;
}

export interface BillingDetails {
  name: string;
  address?: { postal_code?: string };
}

export interface ConfirmCardPaymentResult {
  error?: StripeError | null;
  paymentIntent?: { id: string; status: string };
}

export interface StripeClient {
  elements(options?: { locale?: string }): StripeElements;
  /** Stripe.js shows 3-D Secure itself when the payment needs it (`requires_action`). */
  confirmCardPayment(
    clientSecret: string,
    data: { payment_method: { card: StripeCardElement; billing_details: BillingDetails } },
  ): Promise<ConfirmCardPaymentResult>;
}

/** A card element on the page, ready for `confirmCardPayment`. */
export interface MountedCard {
  stripe: StripeClient;
  element: StripeCardElement;
}

export type StripeFactory = (publishableKey: string, options?: { locale?: string }) => StripeClient;

declare global {
  interface Window {
    Stripe?: StripeFactory;
  }
}

let loading: { url: string; promise: Promise<StripeFactory> } | null = null;

/**
 * Adds the Stripe.js script tag once, when the first card form needs it (not at start-up:
 * most visits never pay). A failed load is forgotten, so opening the form again retries.
 */
export function loadStripeJs(url: string): Promise<StripeFactory> {
  if (loading?.url === url) return loading.promise;
  const promise = new Promise<StripeFactory>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = url;
    script.async = true;
    script.addEventListener('load', () => {
      if (window.Stripe) resolve(window.Stripe);
      else reject(new Error(`${url} did not define Stripe`));
    });
    script.addEventListener('error', () => {
      script.remove();
      reject(new Error(`could not load ${url}`));
    });
    document.head.append(script);
  });
  const entry = { url, promise };
  loading = entry;
  promise.catch(() => {
    if (loading === entry) loading = null;
  });
  return promise;
}

/** Tests start from a page without the script. */
export function forgetStripeJs() {
  loading = null;
}
