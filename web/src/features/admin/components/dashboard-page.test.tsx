import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { jsonResponse } from '@/test/fixtures';
import type { AdminStats } from '@/types/generated';
import { useStatsStore } from '../stores/stats-store';
import { errorAnswer, fakeServer } from '../testing/fake-server';
import { stats, statsDay, USER_ID } from '../testing/fixtures';
import { DashboardPage } from './dashboard-page';

/** uPlot draws on a canvas jsdom has not got: a stand-in keeps what each chart was given. */
const plots = vi.hoisted(() => [] as { series: string[]; data: number[][]; destroyed: boolean }[]);
vi.mock('uplot', () => ({
  default: class {
    entry: (typeof plots)[number];
    constructor(options: { series: { label?: string }[] }, data: number[][]) {
      this.entry = { series: options.series.slice(1).map((s) => s.label ?? ''), data, destroyed: false };
      plots.push(this.entry);
    }
    setSize() {}
    destroy() {
      this.entry.destroyed = true;
    }
  },
}));

const fetchMock = vi.fn<typeof fetch>();
const statsCalls = () =>
  fetchMock.mock.calls.map(([url]) => url as string).filter((url) => url.startsWith('/api/admin/stats'));
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
const query = (from: string, to: string) => `/api/admin/stats?from=${from}&to=${to}&by=day&tz=${encodeURIComponent(zone)}`;
/** An element's text with the no-break spaces of Intl's money and numbers as plain ones. */
const plain = (node: Element | null) => (node?.textContent ?? '').replace(/[\u00a0\u202f]/g, ' ');
const shownPlots = () => plots.filter((plot) => !plot.destroyed);

function serve(answer: AdminStats) {
  fetchMock.mockImplementation(fakeServer({ 'GET /api/admin/stats': { success: true, data: answer } }));
}

function renderPage(path = '/admin') {
  const router = createMemoryRouter(
    [
      { path: '/admin', element: <DashboardPage /> },
      { path: '/admin/users/:id', element: <p>user page</p> },
    ],
    { initialEntries: [path] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

beforeEach(async () => {
  // Noon UTC is 14 March in every zone from -12 to +11 hours: "today" for the ranges.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2025-03-14T12:00:00Z'));
  vi.stubGlobal('fetch', fetchMock);
  vi.stubGlobal(
    'ResizeObserver',
    class {
      observe() {}
      disconnect() {}
    },
  );
  fetchMock.mockReset();
  serve(stats());
  plots.length = 0;
  useStatsStore.getState().reset();
  await i18n.changeLanguage('en-US');
});

afterEach(() => {
  vi.useRealTimers();
});

describe('DashboardPage', () => {
  it('asks for the last 30 days in the browser’s zone and shows the figures', async () => {
    renderPage();
    await screen.findByTestId('admin-figure-signUps');
    expect(statsCalls()).toEqual([query('2025-02-13', '2025-03-14')]);
    expect(plain(screen.getByRole('heading', { level: 1 }))).toBe('Overview');
    expect(plain(screen.getByTestId('admin-dashboard-range'))).toBe(`Feb 13, 2025 – Mar 14, 2025, days in ${zone}`);

    const figure = (name: string) => plain(screen.getByTestId(`admin-figure-${name}`).querySelector('dd'));
    expect(figure('signUps')).toBe('3');
    expect(figure('activeUsers')).toBe('4 last day7 last 7 days9 last 30 days');
    expect(figure('messages')).toBe('127');
    expect(figure('tokens')).toBe('45,000 in30,500 out');
    expect(figure('cost')).toBe('€1.59');
    expect(figure('mrr')).toBe('€19.05HUF 2,540');
    expect(figure('revenue')).toBe('€6.35HUF 2,540');
    expect(figure('refunds')).toBe('€6.35HUF 0');
    expect(figure('newSubscriptions')).toBe('1');
    expect(figure('cancelled')).toBe('1');
    expect(figure('failedRenewals')).toBe('1');
  });

  it('draws the charts per day, each with its figures in words', async () => {
    renderPage();
    await screen.findByTestId('admin-chart-activity');
    // Both currencies had money in the range: a chart for each.
    expect(shownPlots().map((plot) => plot.series)).toEqual([
      ['Messages', 'Active users'],
      ['Cost'],
      ['Revenue', 'Refunds'],
      ['Revenue', 'Refunds'],
      ['New', 'Cancelled', 'Failed renewals'],
    ]);
    expect(shownPlots()[0]!.data).toEqual([
      [0, 1, 2],
      [40, 75, 12],
      [3, 5, 4],
    ]);
    expect(shownPlots()[3]!.data).toEqual([
      [0, 1, 2],
      [0, 0, 2540],
      [0, 0, 0],
    ]);
    const activity = screen.getByRole('figure', { name: 'Messages and active users per day' });
    expect(plain(within(activity).getByTestId('admin-chart-activity-summary'))).toBe(
      'Messages: 127 in total, most on Mar 13, 2025 (75). Active users: at most 5, on Mar 13, 2025.',
    );
    expect(plain(screen.getByTestId('admin-chart-revenue-huf-summary'))).toBe(
      'Revenue: HUF 2,540 in total, most on Mar 14, 2025 (HUF 2,540). Refunds: none.',
    );
    // The same figures as a table, newest day first.
    const perDay = screen.getByTestId('admin-per-day');
    const first = within(perDay).getAllByTestId('admin-per-day-row')[0]!;
    expect(plain(first.querySelector('th'))).toBe('Mar 14, 2025');
    expect(plain(first.querySelector('td[data-label="Refunds"]'))).toBe('€6.35HUF 0');
  });

  it('lists the figures by model and plan, and the costliest users (a deleted one as such)', async () => {
    renderPage();
    const models = await screen.findByTestId('admin-by-model');
    const [gpt, image] = within(models).getAllByTestId('admin-by-model-row');
    expect(plain(gpt!.querySelector('th'))).toBe('gpt-4o');
    expect(plain(gpt!.querySelector('td[data-label="Tokens in"]'))).toBe('40,000');
    expect(plain(gpt!.querySelector('td[data-label="Cost"]'))).toBe('€1.50');
    expect(plain(image!.querySelector('td[data-label="Images"]'))).toBe('2');
    expect(plain(image!.querySelector('td[data-label="Cost"]'))).toBe('€0.0925');

    const plus = within(screen.getByTestId('admin-by-plan')).getAllByTestId('admin-by-plan-row')[0]!;
    expect(plain(plus.querySelector('th'))).toBe('Plus');
    expect(plain(plus.querySelector('td[data-label="Revenue"]'))).toBe('€0.00HUF 2,540');
    expect(plain(plus.querySelector('td[data-label="Gross margin"]'))).toBe('€5.10');

    const [bela, deleted] = within(screen.getByTestId('admin-top-users')).getAllByTestId('admin-top-users-row');
    expect(within(bela!).getByRole('link', { name: 'bela.nagy@example.com' }).getAttribute('href')).toBe(`/admin/users/${USER_ID}`);
    expect(plain(deleted!.querySelector('th'))).toBe('Deleted account');
    expect(within(deleted!).queryByRole('link')).toBeNull();

    const subscriptions = within(screen.getByTestId('admin-subscriptions')).getAllByTestId('admin-subscriptions-row');
    expect(subscriptions.map((row) => plain(row))).toEqual(['BaseMonthly3', 'PlusOne-time1']);
  });

  it('opens a user from the costliest users', async () => {
    const router = renderPage();
    fireEvent.click(await screen.findByRole('link', { name: 'bela.nagy@example.com' }));
    await waitFor(() => expect(router.state.location.pathname).toBe(`/admin/users/${USER_ID}`));
  });

  it('asks for the range picked, and keeps it in the address', async () => {
    const router = renderPage();
    await screen.findByTestId('admin-figure-signUps');
    const picker = screen.getByRole('combobox', { name: 'Range' });

    fireEvent.change(picker, { target: { value: '7d' } });
    await waitFor(() => expect(statsCalls().at(-1)).toBe(query('2025-03-08', '2025-03-14')));
    expect(router.state.location.search).toBe('?range=7d');

    fireEvent.change(picker, { target: { value: '12m' } });
    await waitFor(() => expect(statsCalls().at(-1)).toBe(query('2024-03-15', '2025-03-14')));

    fireEvent.change(picker, { target: { value: '90d' } });
    await waitFor(() => expect(statsCalls().at(-1)).toBe(query('2024-12-15', '2025-03-14')));

    // Custom dates start from the range shown; "Show" asks for the dates typed.
    fireEvent.change(picker, { target: { value: 'custom' } });
    const form = await screen.findByRole('form', { name: 'Custom range' });
    // The same days as dates replace the preset in the history: Back leaves the custom form.
    expect(router.state.historyAction).toBe('REPLACE');
    expect(router.state.location.search).toBe('?from=2024-12-15&to=2025-03-14');
    expect(within(form).getByLabelText<HTMLInputElement>('From').value).toBe('2024-12-15');
    fireEvent.change(within(form).getByLabelText('From'), { target: { value: '2025-01-01' } });
    fireEvent.change(within(form).getByLabelText('To'), { target: { value: '2025-01-31' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Show' }));
    await waitFor(() => expect(statsCalls().at(-1)).toBe(query('2025-01-01', '2025-01-31')));
    expect(router.state.location.search).toBe('?from=2025-01-01&to=2025-01-31');
    expect(statsCalls()).toHaveLength(5);
  });

  it('refuses custom dates the server would refuse, saying why, and asks for nothing', async () => {
    renderPage('/admin?from=2025-01-01&to=2025-01-07');
    const form = await screen.findByRole('form', { name: 'Custom range' });
    const from = within(form).getByLabelText('From');
    const to = within(form).getByLabelText('To');

    fireEvent.change(from, { target: { value: '2025-02-01' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Show' }));
    expect(plain(await within(form).findByRole('alert'))).toBe('The last day cannot be before the first.');
    expect(from.getAttribute('aria-invalid')).toBe('true');

    fireEvent.change(from, { target: { value: '2024-01-06' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Show' }));
    expect(plain(await within(form).findByRole('alert'))).toBe('A range can hold at most 366 days.');
    expect(statsCalls()).toEqual([query('2025-01-01', '2025-01-07')]);

    // A leap year's 366 days are fine.
    fireEvent.change(from, { target: { value: '2024-01-07' } });
    fireEvent.change(to, { target: { value: '2025-01-06' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Show' }));
    await waitFor(() => expect(statsCalls().at(-1)).toBe(query('2024-01-07', '2025-01-06')));
  });

  it('reads the range from the address', async () => {
    renderPage('/admin?from=2025-01-01&to=2025-01-07');
    await screen.findByTestId('admin-figure-signUps');
    expect(statsCalls()).toEqual([query('2025-01-01', '2025-01-07')]);
    expect(screen.getByRole<HTMLSelectElement>('combobox', { name: 'Range' }).value).toBe('custom');
  });

  it('says when nothing happened in the range, and still shows the subscriptions of now', async () => {
    serve(
      stats({
        days: [statsDay('2025-03-13'), statsDay('2025-03-14')],
        activeUsers: { daily: 0, weekly: 0, monthly: 0 },
        byModel: [],
        byPlan: [],
        topUsers: [],
        subscriptions: [],
        mrr: { eur: 0, huf: 0 },
      }),
    );
    renderPage();
    expect(plain((await screen.findByTestId('admin-dashboard-empty')))).toBe(
      'Nothing happened in this range: no sign-ups, messages or payments.',
    );
    expect(screen.queryByTestId('admin-chart-activity')).toBeNull();
    expect(screen.queryByTestId('admin-by-model')).toBeNull();
    expect(plots).toEqual([]);
    expect(plain(screen.getByTestId('admin-subscriptions'))).toContain('No paid subscription is active.');
    expect(plain(screen.getByTestId('admin-figure-messages').querySelector('dd'))).toBe('0');
  });

  it('shows the server’s error, and loads again on "Try again"', async () => {
    let fail = true;
    fetchMock.mockImplementation(
      fakeServer({
        'GET /api/admin/stats': () =>
          fail
            ? errorAnswer(400, 'validation_error', 'The range may be at most 366 days.')
            : jsonResponse(200, { success: true, data: stats() }),
      }),
    );
    renderPage('/admin?from=2020-01-01&to=2025-03-14');
    const error = await screen.findByTestId('admin-dashboard-error');
    expect(plain(within(error).getByRole('alert'))).toBe('The range may be at most 366 days.');
    expect(screen.queryByTestId('admin-figure-signUps')).toBeNull();

    fail = false;
    fireEvent.click(within(error).getByRole('button', { name: 'Try again' }));
    await screen.findByTestId('admin-figure-signUps');
    expect(screen.queryByTestId('admin-dashboard-error')).toBeNull();
    expect(statsCalls()).toHaveLength(2);
  });

  it('says the figures could not be loaded when the server fails (its toast says why)', async () => {
    fetchMock.mockImplementation(fakeServer({ 'GET /api/admin/stats': () => errorAnswer(500, 'internal_error', 'boom') }));
    renderPage();
    const error = await screen.findByTestId('admin-dashboard-error');
    expect(plain(within(error).getByRole('alert'))).toBe('The figures could not be loaded.');
  });

  it('speaks Hungarian, with Hungarian dates and money', async () => {
    await i18n.changeLanguage('hu-HU');
    renderPage();
    await screen.findByTestId('admin-figure-signUps');
    expect(plain(screen.getByRole('heading', { level: 1 }))).toBe('Áttekintés');
    expect(screen.getByRole('combobox', { name: 'Időszak' })).toBeDefined();
    expect(plain(screen.getByTestId('admin-figure-mrr'))).toBe('MRR (nettó)19,05 EUR2540 Ft');
    expect(plain(screen.getByTestId('admin-figure-tokens').querySelector('dd'))).toBe('45 000 be30 500 ki');
    expect(plain(screen.getByTestId('admin-chart-activity-summary'))).toBe(
      'Üzenetek: összesen 127; a legtöbb (75) napja 2025. márc. 13. Aktív felhasználók: a legtöbb (5) napja 2025. márc. 13.',
    );
    expect(shownPlots()[0]!.series).toEqual(['Üzenetek', 'Aktív felhasználók']);
    expect(within(screen.getByTestId('admin-top-users')).getByText('Törölt fiók')).toBeDefined();
  });
});
