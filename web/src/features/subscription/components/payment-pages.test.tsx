import { act, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { chatSocket } from '@/lib/socket';
import { jsonResponse } from '@/test/fixtures';
import type { PaymentStatus } from '@/types/generated';
import { initialSubscriptionState, useSubscriptionStore } from '../stores/subscription-store';
import { fakeServer, payment, subscriptionOn } from '../testing/fixtures';
import { PaymentCancelPage, PaymentStatusPage, PaymentSuccessPage, POLL_INTERVAL_MS, SLOW_AFTER_MS } from './payment-pages';

const fetchMock = vi.fn<typeof fetch>();

function renderAt(entry: string) {
  const router = createMemoryRouter(
    [
      { path: '/payment/status', element: <PaymentStatusPage /> },
      { path: '/payment-success', element: <PaymentSuccessPage /> },
      { path: '/payment-cancel', element: <PaymentCancelPage /> },
    ],
    { initialEntries: [entry] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

const answer = (status: PaymentStatus) => jsonResponse(200, { success: true, data: { ...payment, status } });
const paymentCalls = () => fetchMock.mock.calls.filter(([url]) => typeof url === 'string' && url.startsWith('/api/payments/')).length;
const statusPage = `/payment/status?paymentId=${payment._id}`;

/** Lets the fetch answers and React's updates run, then moves the clock. */
async function advance(ms: number) {
  await act(() => vi.advanceTimersByTimeAsync(ms));
}

beforeEach(async () => {
  vi.useFakeTimers({ shouldAdvanceTime: false, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  useSubscriptionStore.setState(initialSubscriptionState);
  vi.spyOn(chatSocket, 'on').mockReturnValue(() => undefined);
  await i18n.changeLanguage('en-US');
});

afterEach(() => {
  vi.useRealTimers();
});

describe('PaymentStatusPage', () => {
  it('checks until the payment succeeds, then shows the success page', async () => {
    const statuses: PaymentStatus[] = ['pending', 'pending', 'succeeded'];
    fetchMock.mockImplementation(
      fakeServer({
        [`GET /api/payments/${payment._id}`]: () => answer(statuses.shift() ?? 'succeeded'),
        'GET /api/subscription': { success: true, ...subscriptionOn('plus') },
      }),
    );
    const router = renderAt(statusPage);
    expect(screen.getByTestId('payment-status').textContent).toContain('Processing your payment…');
    await advance(0);
    expect(screen.getByTestId('payment-status').textContent).toContain('Checking your payment…');
    expect(fetchMock.mock.calls[0]?.[0]).toBe(`/api/payments/${payment._id}`);
    await advance(POLL_INTERVAL_MS);
    expect(paymentCalls()).toBe(2);
    await advance(POLL_INTERVAL_MS);
    expect(router.state.location.pathname).toBe('/payment-success');
    await advance(0);
    expect(screen.getByTestId('payment-success-plan').textContent).toBe('Your Plus plan is active.');
    expect(screen.getByRole('link', { name: 'Start chatting' }).getAttribute('href')).toBe('/chat');
  });

  it.each([
    ['canceled', 'Payment cancelled', 'nothing was charged'],
    ['failed', 'Payment failed', 'Payment failed, please try again.'],
  ] as const)('sends a %s payment to the cancel page', async (status, title, body) => {
    fetchMock.mockResolvedValue(answer(status));
    const router = renderAt(statusPage);
    await advance(0);
    expect(router.state.location.pathname).toBe('/payment-cancel');
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe(title);
    expect(screen.getByText(new RegExp(body))).toBeDefined();
    expect(screen.getByRole('link', { name: 'Back to plans' }).getAttribute('href')).toBe('/settings#subscription');
  });

  it('stops asking after a minute and lets the user check again', async () => {
    fetchMock.mockImplementation(() => Promise.resolve(answer('pending')));
    renderAt(statusPage);
    await advance(SLOW_AFTER_MS + POLL_INTERVAL_MS);
    const status = screen.getByTestId('payment-status');
    expect(status.getAttribute('data-state')).toBe('slow');
    const asked = paymentCalls();
    await advance(POLL_INTERVAL_MS * 3);
    expect(paymentCalls()).toBe(asked);
    fetchMock.mockImplementation(
      fakeServer({
        [`GET /api/payments/${payment._id}`]: () => answer('succeeded'),
        'GET /api/subscription': { success: true, ...subscriptionOn('plus') },
      }),
    );
    act(() => screen.getByRole('button', { name: 'Check again' }).click());
    await advance(0);
    // The check asked for, then the success page's own look at the payment.
    expect(paymentCalls()).toBe(asked + 2);
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Payment successful');
  });

  it('says so when there is no such payment', async () => {
    fetchMock.mockResolvedValue(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
    renderAt(statusPage);
    await advance(0);
    expect(screen.getByTestId('payment-status').textContent).toBe('This payment was not found.');
  });

  it('needs a payment id', () => {
    renderAt('/payment/status');
    expect(screen.getByTestId('payment-status').textContent).toBe('There is no payment to check.');
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe('PaymentSuccessPage', () => {
  const successPage = `/payment-success?paymentId=${payment._id}`;

  it('claims no success without a payment id: a neutral page with the way to the plans', () => {
    renderAt('/payment-success');
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('No payment to confirm');
    expect(screen.queryByText('Payment successful')).toBeNull();
    expect(screen.getByTestId('payment-success-state').textContent).toContain('There is no payment here to confirm');
    expect(screen.getByRole('link', { name: 'View your subscription' }).getAttribute('href')).toBe('/settings#subscription');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('says so in Hungarian too', async () => {
    await i18n.changeLanguage('hu-HU');
    renderAt('/payment-success');
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Nincs megerősítendő fizetés');
    expect(screen.queryByText('Sikeres fizetés')).toBeNull();
  });

  it('shows the success of a payment the server says succeeded, with the plan', async () => {
    fetchMock.mockImplementation(
      fakeServer({
        [`GET /api/payments/${payment._id}`]: () => answer('succeeded'),
        'GET /api/subscription': { success: true, ...subscriptionOn('plus') },
      }),
    );
    renderAt(successPage);
    expect(screen.queryByText('Payment successful')).toBeNull();
    await advance(0);
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Payment successful');
    expect(screen.getByTestId('payment-success-plan').textContent).toBe('Your Plus plan is active.');
  });

  it('claims no success for a payment that is not found', async () => {
    fetchMock.mockResolvedValue(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
    renderAt(successPage);
    await advance(0);
    expect(screen.queryByText('Payment successful')).toBeNull();
    expect(screen.getByTestId('payment-success-state').textContent).toBe('This payment was not found.');
    expect(screen.getByRole('link', { name: 'View your subscription' })).toBeDefined();
  });

  it.each([
    ['pending', '/payment/status'],
    ['failed', '/payment-cancel'],
  ] as const)('sends a %s payment on to %s', async (status, path) => {
    fetchMock.mockResolvedValue(answer(status));
    const router = renderAt(successPage);
    await advance(0);
    expect(router.state.location.pathname).toBe(path);
  });
});
