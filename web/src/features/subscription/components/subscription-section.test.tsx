import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { chatSocket } from '@/lib/socket';
import type { SocketEventMap } from '@/lib/socket-protocol';
import { jsonResponse } from '@/test/fixtures';
import type { PlanType, Subscription } from '@/types/generated';
import { initialSubscriptionState, useSubscriptionStore } from '../stores/subscription-store';
import { billingInfo, fakeServer, invoice, payment, plansAnswer, subscriptionOn } from '../testing/fixtures';
import { browser } from '../utils/browser';
import { SubscriptionSection } from './subscription-section';

const fetchMock = vi.fn<typeof fetch>();
type Listener = (payload: unknown) => void;
let socketListeners: Map<string, Listener>;

function serve(subscription: Subscription, routes: Record<string, object> = {}, savedBilling: object | null = billingInfo) {
  fetchMock.mockImplementation(
    fakeServer({
      'GET /api/plans': plansAnswer,
      'GET /api/subscription': { success: true, ...subscription },
      'GET /api/settings': { success: true, settings: {}, billingInfo: savedBilling },
      'GET /api/payments': { success: true, data: [] },
      'GET /api/invoices': { success: true, data: [] },
      ...routes,
    }),
  );
}

function renderSection() {
  const router = createMemoryRouter(
    [
      { path: '/settings', element: <SubscriptionSection /> },
      { path: '/payment/status', element: <p>status page</p> },
    ],
    { initialEntries: ['/settings'] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

const calls = (method: string, path: string) =>
  fetchMock.mock.calls.filter(([url, init]) => url === path && (init?.method ?? 'GET') === method);
const choose = async (planType: PlanType) => fireEvent.click(await screen.findByTestId(`choose-plan-${planType}`));
const dialog = () => screen.getByRole('dialog');

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  useSubscriptionStore.setState(initialSubscriptionState);
  socketListeners = new Map();
  vi.spyOn(chatSocket, 'on').mockImplementation((type, listener) => {
    socketListeners.set(type, listener as Listener);
    return () => socketListeners.delete(type);
  });
  await i18n.changeLanguage('en-US');
});

describe('SubscriptionSection', () => {
  it('shows the current plan, highlighted, with its renewal date', async () => {
    serve(subscriptionOn('plus'));
    renderSection();
    const current = await screen.findByTestId('current-plan');
    expect(current.textContent).toContain('Plus plan');
    expect(current.textContent).toContain('Renews automatically on April 14, 2025.');
    expect(screen.getByTestId('plan-card-plus').getAttribute('data-current')).toBe('true');
    expect(screen.getByTestId('choose-plan-plus')).toHaveProperty('disabled', true);
    expect(screen.getByTestId('choose-plan-pro').textContent).toBe('Upgrade to Pro');
    expect(screen.getByTestId('choose-plan-base').textContent).toBe('Switch to Base');
  });

  it('asks before a downgrade to a lower paid plan (SPEC §4), then shows the scheduled change', async () => {
    const scheduled = subscriptionOn('plus', {}, 'base');
    serve(subscriptionOn('plus'), {
      'PUT /api/subscription/change': { success: true, requiresPayment: false, ...scheduled },
      'PUT /api/subscription/cancel-pending': { success: true, ...subscriptionOn('plus') },
    });
    renderSection();
    await choose('base');
    expect(within(dialog()).getByText('Your daily and monthly limits will be lower. Quotas you have already used are not reset.')).toBeDefined();
    expect(dialog().textContent).toContain('You keep Plus until April 14, 2025. From then on Base renews monthly at €5.00 net.');
    expect(calls('PUT', '/api/subscription/change')).toHaveLength(0);

    fireEvent.click(screen.getByTestId('confirm-dialog-confirm'));
    const pending = await screen.findByTestId('pending-change');
    expect(JSON.parse(calls('PUT', '/api/subscription/change')[0]![1]!.body as string)).toEqual({ planType: 'base' });
    expect(pending.textContent).toContain('Your plan changes to Base on April 14, 2025.');
    expect(screen.getByTestId('choose-plan-base').textContent).toBe('Starts on April 14, 2025');

    fireEvent.click(within(pending).getByRole('button', { name: 'Cancel scheduled change' }));
    await waitFor(() => expect(screen.queryByTestId('pending-change')).toBeNull());
    expect(calls('PUT', '/api/subscription/cancel-pending')).toHaveLength(1);
  });

  it('warns what a downgrade to free loses', async () => {
    serve(subscriptionOn('pro'));
    renderSection();
    await choose('free');
    expect(dialog().textContent).toContain(
      'On the Free plan you lose unlimited messages, advanced models and exclusive features.',
    );
    fireEvent.click(within(dialog()).getByRole('button', { name: 'Keep my plan' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls('PUT', '/api/subscription/change')).toHaveLength(0);
  });

  it('cancels only after confirming that access lasts until the end of the period', async () => {
    serve(subscriptionOn('base'), {
      'PUT /api/subscription/cancel': { success: true, ...subscriptionOn('base', {}, 'free') },
    });
    renderSection();
    fireEvent.click(await screen.findByRole('button', { name: 'Cancel subscription' }));
    expect(dialog().textContent).toContain(
      'You keep access to Base until the end of the billing period, April 14, 2025, then you move to the Free plan.',
    );
    fireEvent.click(screen.getByTestId('confirm-dialog-confirm'));
    const pending = await screen.findByTestId('pending-change');
    expect(pending.textContent).toContain('Your subscription is cancelled. You keep Base until April 14, 2025');
    // The confirm dialog closes a render after the section shows the change.
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Cancel subscription' })).toBeNull());
    expect(screen.getByTestId('current-plan').textContent).toContain('Active until April 14, 2025.');
  });

  it('does not offer a lower paid plan while a one-time plan runs', async () => {
    serve(subscriptionOn('pro', { billingCycle: 'one_time', autoRenew: false }));
    renderSection();
    expect(await screen.findByTestId('choose-plan-plus')).toHaveProperty('disabled', true);
    expect(screen.getByTestId('plan-card-plus').textContent).toContain('Your current plan does not renew');
    expect(screen.getByTestId('current-plan').textContent).toContain('One-time payment: active until April 14, 2025');
    expect(screen.getByTestId('choose-plan-free')).toHaveProperty('disabled', false);
  });

  it('sends an upgrade to the checkout page with an idempotency key', async () => {
    const assign = vi.spyOn(browser, 'assign').mockImplementation(() => undefined);
    const checkoutUrl = `http://127.0.0.1:8080/api/payments/demo/${payment._id}`;
    serve(subscriptionOn('free'), {
      'PUT /api/subscription/change': { success: true, requiresPayment: true, payment, checkoutUrl },
    });
    renderSection();
    await choose('plus');
    fireEvent.click(within(dialog()).getByRole('button', { name: 'Continue to payment' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith(checkoutUrl));
    const [, init] = calls('PUT', '/api/subscription/change')[0]!;
    expect(JSON.parse(init!.body as string)).toEqual({
      planType: 'plus',
      paymentMethod: 'credit_card',
      billingCycle: 'monthly',
      currency: 'EUR',
    });
    expect(new Headers(init!.headers).get('Idempotency-Key')).toMatch(/\S{16,}/);
  });

  it('follows an upgrade charged to the saved card on its payment status page', async () => {
    const assign = vi.spyOn(browser, 'assign').mockImplementation(() => undefined);
    serve(subscriptionOn('base'), {
      'PUT /api/subscription/change': {
        success: true,
        requiresPayment: true,
        payment,
        checkoutUrl: null,
        clientSecret: null,
      },
    });
    const router = renderSection();
    await choose('pro');
    fireEvent.click(within(dialog()).getByRole('button', { name: 'Continue to payment' }));
    await screen.findByText('status page');
    expect(router.state.location.search).toBe(`?paymentId=${encodeURIComponent(payment._id)}`);
    expect(assign).not.toHaveBeenCalled();
  });

  it('asks for billing info before paying when there is none, then opens the checkout at once', async () => {
    serve(subscriptionOn('free'), { 'PUT /api/settings/billing-info': { success: true, billingInfo } }, null);
    renderSection();
    await choose('base');
    expect(screen.queryByRole('dialog')).toBeNull();
    const form = screen.getByTestId('billing-form');
    expect(screen.getByText('Please fill in your billing information before paying for Base.')).toBeDefined();
    expect(document.activeElement).toBe(within(form).getByLabelText('Name'));
    for (const [label, value] of [
      ['Name', 'Anna Kovács'],
      ['Address', 'Fő utca 1.'],
      ['Postal code', '1011'],
      ['City', 'Budapest'],
      ['Country', 'HU'],
    ]) {
      fireEvent.change(within(form).getByLabelText(label!), { target: { value } });
    }
    fireEvent.click(screen.getByTestId('billing-save'));
    // No second press of the plan's button (issue 32): the checkout follows the save.
    expect(await within(await screen.findByRole('dialog')).findByRole('button', { name: 'Continue to payment' })).toBeDefined();
    expect(screen.getByRole('dialog', { name: 'Upgrade to Base' })).toBeDefined();
    expect(dialog().textContent).toContain('Anna Kovács');
  });

  it("shows the checkout it opens after billing info with the VAT of the buyer's country", async () => {
    let saved = false;
    const german = {
      ...plansAnswer,
      data: plansAnswer.data.map((p) => ({
        ...p,
        prices: { ...p.prices, EUR: { net: p.prices.EUR.net, vat: p.prices.EUR.net * 0.19, total: p.prices.EUR.net * 1.19 } },
      })),
      vatRate: 0.19,
      vat: { rate: 0.19, treatment: 'standard', basis: 'billingInfo', country: 'DE' },
    };
    serve(
      subscriptionOn('free'),
      {
        'GET /api/plans': () => jsonResponse(200, saved ? german : plansAnswer),
        'PUT /api/settings/billing-info': () => {
          saved = true;
          return jsonResponse(200, { success: true, billingInfo: { ...billingInfo, country: 'DE' } });
        },
      },
      null,
    );
    renderSection();
    await choose('base');
    const form = screen.getByTestId('billing-form');
    for (const [label, value] of [
      ['Name', 'Anna Kovács'],
      ['Address', 'Hauptstraße 1'],
      ['Postal code', '10115'],
      ['City', 'Berlin'],
      ['Country', 'DE'],
    ]) {
      fireEvent.change(within(form).getByLabelText(label!), { target: { value } });
    }
    fireEvent.click(screen.getByTestId('billing-save'));
    const checkout = await screen.findByRole('dialog', { name: 'Upgrade to Base' });
    await waitFor(() => expect(checkout.textContent).toContain('VAT (19%)'));
    expect(checkout.textContent).toContain('€5.95');
  });

  it('follows subscription.updated from the server, and reads the invoices again', async () => {
    serve(subscriptionOn('free'));
    renderSection();
    await screen.findByTestId('current-plan');
    const invoicesRead = calls('GET', '/api/invoices').length;
    const frame: SocketEventMap['subscription.updated'] = { subscription: subscriptionOn('pro') };
    // The store takes the frame's subscription (subscription-frames.ts, tested there); the
    // section reads what a plan change may have brought.
    act(() => useSubscriptionStore.getState().applySubscription(frame.subscription));
    socketListeners.get('subscription.updated')!(frame);
    await waitFor(() => expect(screen.getByTestId('current-plan').textContent).toContain('Pro plan'));
    expect(screen.getByTestId('plan-card-pro').getAttribute('data-current')).toBe('true');
    await waitFor(() => expect(calls('GET', '/api/invoices')).toHaveLength(invoicesRead + 1));
  });

  it('lists invoices with number, date, plan and gross, each downloadable', async () => {
    serve(subscriptionOn('plus'), {
      'GET /api/payments': { success: true, data: [{ ...payment, status: 'succeeded' }] },
      'GET /api/invoices': { success: true, data: [invoice] },
    });
    renderSection();
    const table = await screen.findByRole('table');
    const cells = within(table).getAllByRole('cell').map((cell) => cell.textContent?.replace(/\s+/g, ' '));
    expect(cells.slice(0, 4)).toEqual(['2025-000042', 'March 14, 2025', 'Plus (monthly)', '€12.70']);
    expect(within(table).getByRole('button', { name: 'Download invoice 2025-000042 as PDF' })).toBeDefined();
  });

  it('marks a credit note as one, with its negative total and the invoice it refers to (issue 34)', async () => {
    const creditNote = {
      ...invoice,
      _id: '0195941aae987c1d9e2f3a4b5c6d7e91',
      kind: 'credit_note',
      number: '2025-000057',
      creditNoteOf: invoice.number,
      netAmount: -10,
      vatAmount: -2.7,
      totalAmount: -12.7,
      pdfUrl: '/api/invoices/0195941aae987c1d9e2f3a4b5c6d7e91.pdf',
    };
    serve(subscriptionOn('plus'), { 'GET /api/invoices': { success: true, data: [creditNote, invoice] } });
    renderSection();
    const note = await screen.findByTestId('invoice-2025-000057');
    expect(within(note).getByTestId('credit-note').textContent).toBe('2025-000057 Credit noteRefers to invoice 2025-000042');
    expect(note.textContent).toContain('-€12.70');
    expect(screen.getByTestId('invoice-2025-000042').textContent).not.toContain('Credit note');
    await act(() => i18n.changeLanguage('hu-HU'));
    expect(within(note).getByTestId('credit-note').textContent).toContain('Jóváíró számla');
    expect(within(note).getByTestId('credit-note').textContent).toContain('Eredeti számla: 2025-000042');
  });

  it("tells a company VIES did not confirm why it pays VAT, in both languages", async () => {
    const company = {
      ...billingInfo,
      billingType: 'company',
      companyName: 'Acme GmbH',
      country: 'DE',
      vatNumber: 'DE000000000',
      vatCheck: {
        vatNumber: 'DE000000000',
        status: 'invalid',
        checkedAt: '2025-03-14T10:00:00.000Z',
        requestDate: '2025-03-14T10:00:00.000Z',
        name: null,
        address: null,
        error: null,
      },
    };
    serve(subscriptionOn('free'), {}, company);
    renderSection();
    const reason = await screen.findByTestId('billing-vat-check');
    expect(reason.textContent).toContain("The EU's VIES service does not confirm this VAT number");
    await act(() => i18n.changeLanguage('hu-HU'));
    expect(screen.getByTestId('billing-vat-check').textContent).toContain(
      'Az EU VIES szolgáltatása nem erősíti meg ezt a közösségi adószámot',
    );
  });

  it('shows no VIES line for a buyer VIES does not decide', async () => {
    serve(subscriptionOn('free'));
    renderSection();
    await screen.findByTestId('current-plan');
    expect(screen.queryByTestId('billing-vat-check')).toBeNull();
  });

  it('offers a retry when loading fails', async () => {
    fetchMock.mockResolvedValue(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
    renderSection();
    expect((await screen.findByRole('alert')).textContent).toBe('Your subscription could not be loaded.');
    serve(subscriptionOn('free'));
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByTestId('current-plan')).toBeDefined();
  });
});
