import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { forgetPaymentsConfig } from '../api/payments-config';
import { initialSubscriptionState, useSubscriptionStore } from '../stores/subscription-store';
import {
  forgetStripeJs,
  type ConfirmCardPaymentResult,
  type StripeCardChangeEvent,
  type StripeCardElement,
  type StripeClient,
} from '../stripe/stripe-js';
import { billingInfo, fakeServer, payment, plans, plansAnswer } from '../testing/fixtures';
import { CheckoutDialog } from './checkout-dialog';
import { PaymentCancelPage } from './payment-pages';

const JS_URL = 'http://127.0.0.1:8420/js.stripe.com/v3/';
const CLIENT_SECRET = 'pi_123_secret_abc';
const fetchMock = vi.fn<typeof fetch>();

function serve(change: object = { success: true, requiresPayment: true, payment, checkoutUrl: null, clientSecret: CLIENT_SECRET }) {
  fetchMock.mockImplementation(
    fakeServer({
      'GET /api/payments/config': { success: true, data: { provider: 'stripe', publishableKey: 'pk_test_1', jsUrl: JS_URL } },
      'PUT /api/subscription/change': change,
    }),
  );
}

/** A stand-in for Stripe.js: records what the form asks and answers each confirm in turn. */
function fakeStripe(...answers: ConfirmCardPaymentResult[]) {
  const listeners: ((event?: StripeCardChangeEvent) => void)[] = [];
  const element: StripeCardElement = {
    mount: vi.fn((host: HTMLElement) => host.append(document.createElement('iframe'))),
    destroy: vi.fn(),
    on: (_event, listener) => listeners.push(listener),
  };
  const stripe: StripeClient = {
    elements: vi.fn(() => ({ create: vi.fn(() => element) })),
    confirmCardPayment: vi.fn(() => Promise.resolve(answers.shift() ?? {})),
  };
  const factory = vi.fn(() => stripe);
  return {
    factory,
    stripe,
    element,
    change: (event?: StripeCardChangeEvent) => act(() => listeners.forEach((listener) => listener(event))),
  };
}

const stripeScript = () =>
  waitFor(() => {
    const tag = document.head.querySelector<HTMLScriptElement>(`script[src="${JS_URL}"]`);
    expect(tag).not.toBeNull();
    return tag!;
  });

/** Answers the script tag the card form adds, as the browser would once Stripe.js ran. */
async function stripeJsLoads(factory: ReturnType<typeof fakeStripe>['factory']) {
  const script = await stripeScript();
  window.Stripe = factory;
  act(() => {
    script.dispatchEvent(new Event('load'));
  });
}

function renderDialog() {
  const router = createMemoryRouter(
    [
      { path: '/settings', element: <CheckoutDialog plan={plans.plus} onClose={() => undefined} onEditBilling={() => undefined} /> },
      { path: '/payment/status', element: <p>status page</p> },
      { path: '/payment-cancel', element: <PaymentCancelPage /> },
    ],
    { initialEntries: ['/settings'] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

const changeCalls = () => fetchMock.mock.calls.filter(([url, init]) => url === '/api/subscription/change' && init?.method === 'PUT');
const payButton = () => within(screen.getByRole('dialog')).getByTestId('confirm-dialog-confirm');
const cardError = () => screen.getByTestId('card-error').textContent;

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  forgetPaymentsConfig();
  forgetStripeJs();
  useSubscriptionStore.setState({ ...initialSubscriptionState, status: 'ready', plans: plansAnswer.data, vatRate: 0.27, billingInfo });
  await i18n.changeLanguage('en-US');
});

afterEach(() => {
  document.head.querySelectorAll('script').forEach((script) => script.remove());
  delete window.Stripe;
});

describe('CheckoutDialog with Stripe', () => {
  it('loads Stripe.js from the configured URL, pays with the card and waits on the status page', async () => {
    serve();
    const fake = fakeStripe({ paymentIntent: { id: 'pi_123', status: 'succeeded' } });
    expect(document.head.querySelector('script')).toBeNull();
    const router = renderDialog();
    await stripeJsLoads(fake.factory);
    expect(fake.factory).toHaveBeenCalledWith('pk_test_1');
    expect(fake.element.mount).toHaveBeenCalledWith(screen.getByTestId('card-element'));
    expect(within(screen.getByTestId('card-form')).getByLabelText('Name on card')).toHaveProperty('value', 'Anna Kovács');

    await waitFor(() => expect(payButton()).toHaveProperty('disabled', false));
    expect(payButton().textContent).toBe('Pay €12.70');
    fireEvent.click(payButton());

    await waitFor(() => expect(router.state.location.pathname).toBe('/payment/status'));
    expect(router.state.location.search).toBe(`?paymentId=${payment._id}`);
    expect(fake.stripe.confirmCardPayment).toHaveBeenCalledWith(CLIENT_SECRET, {
      payment_method: { card: fake.element, billing_details: { name: 'Anna Kovács', address: { postal_code: '1011' } } },
    });
    expect(changeCalls()).toHaveLength(1);
    await waitFor(() => expect(fake.element.destroy).toHaveBeenCalled());
  });

  it('shows what the card element says while typing in our words, and pays nothing until it is fixed', async () => {
    serve();
    const fake = fakeStripe();
    renderDialog();
    await stripeJsLoads(fake.factory);
    fake.change({ complete: false, error: { type: 'validation_error', code: 'invalid_number', message: 'Your card number is invalid.' } });
    expect(cardError()).toBe('Invalid card number');
    await act(() => i18n.changeLanguage('hu-HU'));
    expect(cardError()).toBe('Érvénytelen kártyaszám');
    await act(() => i18n.changeLanguage('en-US'));

    fireEvent.click(payButton());
    await act(() => Promise.resolve());
    expect(changeCalls()).toHaveLength(0);
    expect(fake.stripe.confirmCardPayment).not.toHaveBeenCalled();

    // localstripe's fake element reports a change without an event: nothing to show.
    fake.change();
    expect(cardError()).toBe('');
  });

  it('keeps the form after a card error from the payment, then confirms the same payment again', async () => {
    serve();
    const fake = fakeStripe({ error: { type: 'card_error', code: 'expired_card', message: 'Your card has expired.' } }, {});
    const router = renderDialog();
    await stripeJsLoads(fake.factory);
    await waitFor(() => expect(payButton()).toHaveProperty('disabled', false));
    fireEvent.click(payButton());
    await waitFor(() => expect(cardError()).toBe('Your card has expired'));
    expect(router.state.location.pathname).toBe('/settings');

    fake.change({ complete: true });
    fireEvent.click(payButton());
    await waitFor(() => expect(router.state.location.pathname).toBe('/payment/status'));
    expect(fake.stripe.confirmCardPayment).toHaveBeenCalledTimes(2);
    expect(changeCalls()).toHaveLength(1);
  });

  it('ends on the payment failed page when the card is declined', async () => {
    serve();
    const fake = fakeStripe({ error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } });
    const router = renderDialog();
    await stripeJsLoads(fake.factory);
    await waitFor(() => expect(payButton()).toHaveProperty('disabled', false));
    fireEvent.click(payButton());
    await waitFor(() => expect(router.state.location.pathname).toBe('/payment-cancel'));
    expect(router.state.location.search).toBe(`?paymentId=${payment._id}&status=failed`);
    expect((await screen.findByRole('heading', { level: 1 })).textContent).toBe('Payment failed');
    expect(document.body.textContent).toContain('Payment failed, please try again');
  });

  it('asks for the name on the card before paying', async () => {
    serve();
    const fake = fakeStripe();
    renderDialog();
    await stripeJsLoads(fake.factory);
    fireEvent.change(screen.getByLabelText('Name on card'), { target: { value: '  ' } });
    await waitFor(() => expect(payButton()).toHaveProperty('disabled', false));
    fireEvent.click(payButton());
    expect(await screen.findByText('Name is required')).toBeDefined();
    expect(changeCalls()).toHaveLength(0);
  });

  it('says so when Stripe.js cannot be loaded, and tries again on request', async () => {
    serve();
    const fake = fakeStripe();
    renderDialog();
    const first = await stripeScript();
    act(() => {
      first.dispatchEvent(new Event('error'));
    });
    expect(await screen.findByText('The card form could not be loaded. Please check your connection and try again.')).toBeDefined();
    expect(payButton()).toHaveProperty('disabled', true);
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    await stripeJsLoads(fake.factory);
    await waitFor(() => expect(payButton()).toHaveProperty('disabled', false));
  });
});
