import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { jsonResponse } from '@/test/fixtures';
import { useAdminUserStore } from '../stores/admin-stores';
import { errorAnswer, fakeServer, type Handler } from '../testing/fake-server';
import { detail, payment, row, usage, USER_ID } from '../testing/fixtures';
import { UserPage } from './user-page';

const fetchMock = vi.fn<typeof fetch>();
const USER = `/api/admin/users/${USER_ID}`;
const REFUND = `/api/admin/payments/${payment._id}/refund`;

const callsTo = (method: string, path: string) =>
  fetchMock.mock.calls.filter(([url, init]) => url === path && (init?.method ?? 'GET') === method);
const bodies = (method: string, path: string) => callsTo(method, path).map(([, init]) => JSON.parse(init!.body as string) as unknown);
const keys = () => callsTo('POST', REFUND).map(([, init]) => new Headers(init!.headers).get('Idempotency-Key'));

/** The user as the server has them now; actions below change it. */
let current = detail();

function serve(routes: Record<string, Handler | object> = {}) {
  fetchMock.mockImplementation(
    fakeServer({ [`GET ${USER}`]: () => jsonResponse(200, { success: true, data: current }), ...routes }),
  );
}

function renderPage() {
  const router = createMemoryRouter(
    [
      { path: '/admin/users/:id', element: <UserPage /> },
      { path: '/admin/audit', element: <p>audit</p> },
      { path: '/admin/users', element: <p>users</p> },
    ],
    { initialEntries: [`/admin/users/${USER_ID}`] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

const dialog = (testId: string) => screen.getByTestId(testId);
const submit = () => screen.getByTestId<HTMLButtonElement>('admin-dialog-submit');
const typeReason = (text: string) => fireEvent.change(screen.getByRole('textbox', { name: 'Reason' }), { target: { value: text } });

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  current = detail();
  serve();
  useAdminUserStore.getState().reset();
  await i18n.changeLanguage('en-US');
});

describe('UserPage', () => {
  it('shows the profile, plan, usage, payments, invoices and the admin actions', async () => {
    renderPage();
    expect(await screen.findByRole('heading', { level: 1, name: 'bela.nagy@example.com' })).toBeDefined();
    const profile = screen.getByTestId('admin-user-profile');
    expect(profile.textContent).toContain('Nagy Béla');
    expect(screen.getByTestId('admin-user-status').textContent).toBe('Active');
    expect(screen.getByTestId('admin-user-plan-type').textContent).toBe('Plus');
    expect(screen.getByTestId('admin-user-plan-end').textContent).toBe('Renews on Apr 14, 2025');
    expect(screen.getByTestId('admin-user-plan-pending').textContent).toBe('Base, from Apr 14, 2025');
    expect(within(screen.getByTestId('admin-usage-responses')).getByTestId('admin-usage-today').textContent).toBe('12 of 100');

    const payments = screen.getAllByTestId('admin-payment-row');
    expect(within(payments[0]!).getByTestId('admin-payment-refunded').textContent).toBe('€5.00');
    expect(within(payments[0]!).getByTestId('admin-refund')).toBeDefined();
    // A failed payment has nothing to refund.
    expect(within(payments[1]!).queryByTestId('admin-refund')).toBeNull();

    const [note, invoice] = screen.getAllByTestId('admin-invoice-row');
    expect(note!.getAttribute('data-kind')).toBe('credit_note');
    expect(note!.textContent).toContain('Credit note');
    expect(note!.textContent).toContain('Refers to invoice 2025-000042');
    expect(note!.textContent).toContain('-€5.00');
    expect(invoice!.textContent).not.toContain('Credit note');
    // Each has its PDF, fetched from the admin's own route (the user's serves only them).
    expect(within(note!).getByTestId('admin-invoice-pdf')).toBeDefined();
    expect(within(invoice!).getByTestId('admin-invoice-pdf')).toBeDefined();

    const audit = within(screen.getByTestId('admin-user-audit'));
    expect(audit.getAllByTestId('admin-audit-row').map((r) => r.getAttribute('data-action'))).toEqual(['payment.refunded', 'plan.changed']);
    expect(audit.getByText('Refunded a payment')).toBeDefined();
    expect(screen.getByTestId('admin-user-audit-link').getAttribute('href')).toBe(`/admin/audit?userId=${USER_ID}`);
  });

  it('downloads an invoice or credit note from the admin route, and shows a refusal', async () => {
    const first = detail().invoices[0]!;
    const pdf = `/api/admin/invoices/${first._id}.pdf`;
    let answer = new Response('%PDF-1.7', { status: 200, headers: { 'Content-Type': 'application/pdf' } });
    serve({ [`GET ${pdf}`]: () => answer });
    URL.createObjectURL = vi.fn(() => 'blob:pdf');
    URL.revokeObjectURL = vi.fn();
    const saved: string[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      saved.push(this.download);
    });
    renderPage();
    const [row] = await screen.findAllByTestId('admin-invoice-row');
    fireEvent.click(within(row!).getByTestId('admin-invoice-pdf'));
    const name = first.kind === 'credit_note' ? `credit-note-${first.number}.pdf` : `invoice-${first.number}.pdf`;
    await waitFor(() => expect(saved).toEqual([name]));
    expect(callsTo('GET', pdf)).toHaveLength(1);

    answer = errorAnswer(403, 'forbidden', 'You do not have permission to do this');
    fireEvent.click(within(row!).getByTestId('admin-invoice-pdf'));
    await screen.findByText('You do not have permission to do this');
    expect(saved).toHaveLength(1);
    click.mockRestore();
  });

  it('changes the plan: a reason is required, days go with a paid plan, the new plan shows', async () => {
    serve({
      [`PUT ${USER}/plan`]: () => {
        current = detail({ subscription: { ...current.subscription, data: { ...current.subscription.data, planType: 'pro' } } });
        return jsonResponse(200, { success: true, data: current });
      },
    });
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-change-plan'));
    expect(within(dialog('admin-plan-dialog')).getByRole('combobox', { name: 'New plan' })).toBeDefined();
    fireEvent.change(screen.getByTestId('admin-plan-select'), { target: { value: 'pro' } });
    fireEvent.change(screen.getByRole('spinbutton', { name: 'For how many days' }), { target: { value: '14' } });
    expect(submit().disabled).toBe(true);
    typeReason('   ');
    expect(submit().disabled).toBe(true);
    typeReason(' Support gesture ');
    expect(submit().disabled).toBe(false);
    fireEvent.click(submit());
    await waitFor(() => expect(screen.queryByTestId('admin-plan-dialog')).toBeNull());
    expect(bodies('PUT', `${USER}/plan`)).toEqual([{ planType: 'pro', days: 14, reason: 'Support gesture' }]);
    expect(screen.getByTestId('admin-user-plan-type').textContent).toBe('Pro');
  });

  it('sends no days for the free plan', async () => {
    serve({ [`PUT ${USER}/plan`]: () => jsonResponse(200, { success: true, data: current }) });
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-change-plan'));
    fireEvent.change(screen.getByTestId('admin-plan-select'), { target: { value: 'free' } });
    expect(screen.queryByTestId('admin-plan-days')).toBeNull();
    typeReason('Chargeback');
    fireEvent.click(submit());
    await waitFor(() => expect(bodies('PUT', `${USER}/plan`)).toEqual([{ planType: 'free', reason: 'Chargeback' }]));
  });

  it('suspends after saying what happens to a Stripe subscription, then shows the suspension', async () => {
    serve({
      [`PUT ${USER}/suspension`]: () => {
        current = detail({ user: row({ status: 'suspended' }), suspendedAt: '2025-03-20T16:00:00.000+00:00' });
        return jsonResponse(200, { success: true, data: { suspended: true, suspendedAt: current.suspendedAt } });
      },
    });
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-suspend'));
    const suspend = dialog('admin-suspend-dialog');
    expect(suspend.textContent).toContain('A paid Stripe subscription is set to cancel at the end of its period');
    expect(submit().disabled).toBe(true);
    typeReason('Abuse');
    fireEvent.click(submit());
    await waitFor(() => expect(screen.getByTestId('admin-user-status').textContent).toBe('Suspended'));
    expect(bodies('PUT', `${USER}/suspension`)).toEqual([{ suspended: true, reason: 'Abuse' }]);
    expect(screen.getByTestId('admin-user-suspended-at')).toBeDefined();
    expect(screen.getByTestId('admin-suspend').textContent).toBe('Unsuspend');
  });

  it('unsuspends a suspended user', async () => {
    current = detail({ user: row({ status: 'suspended' }), suspendedAt: '2025-03-20T16:00:00.000+00:00' });
    serve({ [`PUT ${USER}/suspension`]: { success: true, data: { suspended: false, suspendedAt: null } } });
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-suspend'));
    expect(dialog('admin-suspend-dialog').textContent).toContain('renews again as before');
    typeReason('Resolved');
    fireEvent.click(submit());
    await waitFor(() => expect(bodies('PUT', `${USER}/suspension`)).toEqual([{ suspended: false, reason: 'Resolved' }]));
  });

  it('shows the server’s refusal in the dialog and changes nothing', async () => {
    serve({ [`PUT ${USER}/suspension`]: () => errorAnswer(409, 'cannot_suspend_self', 'Saját magát nem függesztheti fel') });
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-suspend'));
    typeReason('Test');
    fireEvent.click(submit());
    expect((await within(dialog('admin-suspend-dialog')).findByRole('alert')).textContent).toBe('Saját magát nem függesztheti fel');
    expect(screen.getByTestId('admin-user-status').textContent).toBe('Active');
    expect(callsTo('GET', USER)).toHaveLength(1);
  });

  it('resets today’s usage of the service chosen', async () => {
    serve({ [`POST ${USER}/usage-reset`]: { success: true, data: usage } });
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-usage-reset-webSearches'));
    expect(screen.getByTestId<HTMLSelectElement>('admin-usage-service').value).toBe('webSearches');
    expect(submit().disabled).toBe(true);
    typeReason('Search outage');
    fireEvent.click(submit());
    await waitFor(() => expect(screen.queryByTestId('admin-usage-dialog')).toBeNull());
    expect(bodies('POST', `${USER}/usage-reset`)).toEqual([{ service: 'webSearches', reason: 'Search outage' }]);
  });

  it('shows a usage reset’s error in the dialog', async () => {
    serve({ [`POST ${USER}/usage-reset`]: () => errorAnswer(400, 'validation_error', 'Reason is required') });
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-usage-reset-responses'));
    typeReason('x');
    fireEvent.click(submit());
    expect((await within(dialog('admin-usage-dialog')).findByRole('alert')).textContent).toBe('Reason is required');
  });

  it('refunds what remains by default, with one Idempotency-Key per opening of the dialog', async () => {
    let attempts = 0;
    serve({
      [`POST ${REFUND}`]: () =>
        attempts++ === 0
          ? errorAnswer(409, 'refund_too_large', 'The refund is larger than what remains')
          : jsonResponse(200, { success: true, data: { creditNote: {}, payment } }),
    });
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-refund'));
    const refund = dialog('admin-refund-dialog');
    expect(screen.getByTestId<HTMLInputElement>('admin-refund-amount').value).toBe('7.7');
    expect(refund.textContent).toContain('€7.70');
    expect(submit().disabled).toBe(true);
    typeReason('Complaint');
    fireEvent.click(screen.getByRole('checkbox', { name: /end the plan now/i }));
    fireEvent.click(submit());
    fireEvent.click(submit());
    expect((await within(refund).findByRole('alert')).textContent).toBe('The refund is larger than what remains');
    expect(callsTo('POST', REFUND)).toHaveLength(1);

    // A retry in the same dialog is the same refund, whatever was touched in between.
    fireEvent.click(screen.getByRole('checkbox', { name: /end the plan now/i }));
    fireEvent.click(screen.getByRole('checkbox', { name: /end the plan now/i }));
    fireEvent.click(submit());
    await waitFor(() => expect(screen.queryByTestId('admin-refund-dialog')).toBeNull());
    expect(bodies('POST', REFUND)).toEqual([
      { amount: 7.7, reason: 'Complaint', endPlan: true },
      { amount: 7.7, reason: 'Complaint', endPlan: true },
    ]);
    expect(keys()[0]).toBeTruthy();
    expect(keys()[1]).toBe(keys()[0]);

    // A new opening is a new refund.
    fireEvent.click(screen.getByTestId('admin-refund'));
    fireEvent.change(screen.getByTestId('admin-refund-amount'), { target: { value: '2,5' } });
    typeReason('Partial');
    fireEvent.click(submit());
    await waitFor(() => expect(callsTo('POST', REFUND)).toHaveLength(3));
    expect(bodies('POST', REFUND)[2]).toEqual({ amount: 2.5, reason: 'Partial', endPlan: false });
    expect(keys()[2]).not.toBe(keys()[0]);
  });

  it('will not refund more than remains', async () => {
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-refund'));
    typeReason('Too much');
    fireEvent.change(screen.getByTestId('admin-refund-amount'), { target: { value: '7.71' } });
    expect(submit().disabled).toBe(true);
    fireEvent.change(screen.getByTestId('admin-refund-amount'), { target: { value: '0' } });
    expect(submit().disabled).toBe(true);
    fireEvent.change(screen.getByTestId('admin-refund-amount'), { target: { value: '7.70' } });
    expect(submit().disabled).toBe(false);
  });

  it('says when the user cannot be loaded', async () => {
    serve({ [`GET ${USER}`]: () => errorAnswer(404, 'not_found', 'User not found') });
    renderPage();
    expect((await screen.findByRole('alert')).textContent).toBe('User not found');
  });

  it('speaks Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    renderPage();
    await screen.findByTestId('admin-user-page');
    expect(screen.getAllByTestId('admin-invoice-row')[0]!.textContent).toContain('Eredeti számla: 2025-000042');
    fireEvent.click(screen.getByTestId('admin-suspend'));
    expect(screen.getByRole('textbox', { name: 'Indoklás' })).toBeDefined();
    expect(dialog('admin-suspend-dialog').textContent).toContain('Stripe-előfizetés az időszak végén megszűnik');
  });
});
