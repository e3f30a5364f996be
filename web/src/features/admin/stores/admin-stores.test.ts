import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { setToken } from '@/lib/token';
import { jsonResponse } from '@/test/fixtures';
import { errorAnswer, fakeServer } from '../testing/fake-server';
import { auditEntries, detail, payment, row, rows, usage, USER_ID } from '../testing/fixtures';
import { EMPTY_USER_FILTERS, useAdminUsersStore, useAdminUserStore, useAuditStore } from './admin-stores';

const fetchMock = vi.fn<typeof fetch>();
const urls = () => fetchMock.mock.calls.map(([url]) => url as string);
const bodyOf = (index: number) => JSON.parse(fetchMock.mock.calls[index]![1]!.body as string) as unknown;
const headerOf = (index: number, name: string) => new Headers(fetchMock.mock.calls[index]![1]!.headers).get(name);

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  useAdminUsersStore.getState().reset();
  useAuditStore.getState().reset();
  useAdminUserStore.getState().reset();
  setToken('t', { remember: false });
  await i18n.changeLanguage('en-US');
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('users table store', () => {
  it('asks with only the filters that have a value', async () => {
    fetchMock.mockImplementation(fakeServer({ 'GET /api/admin/users': { success: true, data: rows, nextCursor: null } }));
    await useAdminUsersStore.getState().search(EMPTY_USER_FILTERS);
    await useAdminUsersStore.getState().search({ q: '  Bela ', plan: 'plus', status: 'suspended' });
    expect(urls()).toEqual(['/api/admin/users', '/api/admin/users?q=Bela&plan=plus&status=suspended']);
    expect(useAdminUsersStore.getState()).toMatchObject({ status: 'ready', rows, nextCursor: null });
  });

  it('appends the next page with the cursor and the same filters', async () => {
    fetchMock.mockImplementation(
      fakeServer({
        'GET /api/admin/users': (url) =>
          jsonResponse(
            200,
            url.searchParams.get('cursor') === 'c1'
              ? { success: true, data: [row({ _id: 'two', email: 'two@example.com' })], nextCursor: null }
              : { success: true, data: [row()], nextCursor: 'c1' },
          ),
      }),
    );
    const store = useAdminUsersStore.getState();
    await store.search({ q: 'b', plan: '', status: '' });
    expect(useAdminUsersStore.getState().nextCursor).toBe('c1');
    await useAdminUsersStore.getState().loadMore();
    expect(urls()[1]).toBe('/api/admin/users?q=b&cursor=c1');
    expect(useAdminUsersStore.getState().rows.map((r) => r.email)).toEqual(['bela.nagy@example.com', 'two@example.com']);
    expect(useAdminUsersStore.getState().nextCursor).toBeNull();
  });

  it('drops the answer to a search the admin has since changed', async () => {
    let release: (r: Response) => void = () => undefined;
    fetchMock
      .mockImplementationOnce(() => new Promise<Response>((resolve) => (release = resolve)))
      .mockImplementationOnce(() => Promise.resolve(jsonResponse(200, { success: true, data: [row({ email: 'new@example.com' })], nextCursor: null })));
    const first = useAdminUsersStore.getState().search({ q: 'o', plan: '', status: '' });
    await useAdminUsersStore.getState().search({ q: 'ne', plan: '', status: '' });
    release(jsonResponse(200, { success: true, data: [row({ email: 'old@example.com' })], nextCursor: null }));
    await first;
    expect(useAdminUsersStore.getState().rows.map((r) => r.email)).toEqual(['new@example.com']);
  });

  it('keeps the server’s message of a refusal', async () => {
    fetchMock.mockResolvedValue(errorAnswer(403, 'forbidden', 'Ehhez nincs jogosultsága'));
    await useAdminUsersStore.getState().search(EMPTY_USER_FILTERS);
    expect(useAdminUsersStore.getState()).toMatchObject({ status: 'error', error: 'Ehhez nincs jogosultsága' });
  });
});

describe('audit store', () => {
  it('filters by user and pages', async () => {
    fetchMock.mockImplementation(
      fakeServer({ 'GET /api/admin/audit': { success: true, data: auditEntries, nextCursor: 'next' } }),
    );
    await useAuditStore.getState().search({ userId: USER_ID });
    await useAuditStore.getState().loadMore();
    expect(urls()).toEqual([`/api/admin/audit?userId=${USER_ID}`, `/api/admin/audit?userId=${USER_ID}&cursor=next`]);
    expect(useAuditStore.getState().rows).toHaveLength(auditEntries.length * 2);
  });
});

describe('user store', () => {
  it('changes the plan with days only for a paid plan, and shows the answer', async () => {
    const after = detail({ user: row({ planType: 'pro' }) });
    fetchMock.mockImplementation(
      fakeServer({ [`GET /api/admin/users/${USER_ID}`]: { success: true, data: detail() }, [`PUT /api/admin/users/${USER_ID}/plan`]: { success: true, data: after } }),
    );
    await useAdminUserStore.getState().load(USER_ID);
    await useAdminUserStore.getState().setPlan('pro', 14, 'gift');
    await useAdminUserStore.getState().setPlan('free', undefined, 'ended');
    expect(bodyOf(1)).toEqual({ planType: 'pro', days: 14, reason: 'gift' });
    expect(bodyOf(2)).toEqual({ planType: 'free', reason: 'ended' });
    expect(useAdminUserStore.getState().detail).toEqual(after);
  });

  it('reads the user again after a suspension', async () => {
    const suspended = detail({ user: row({ status: 'suspended' }), suspendedAt: '2025-03-20T16:00:00.000+00:00' });
    let reads = 0;
    fetchMock.mockImplementation(
      fakeServer({
        [`GET /api/admin/users/${USER_ID}`]: () => jsonResponse(200, { success: true, data: reads++ === 0 ? detail() : suspended }),
        [`PUT /api/admin/users/${USER_ID}/suspension`]: { success: true, data: { suspended: true, suspendedAt: suspended.suspendedAt } },
      }),
    );
    await useAdminUserStore.getState().load(USER_ID);
    await useAdminUserStore.getState().setSuspended(true, 'abuse');
    expect(bodyOf(1)).toEqual({ suspended: true, reason: 'abuse' });
    expect(useAdminUserStore.getState().detail).toEqual(suspended);
  });

  it('rejects with the server’s message and changes nothing', async () => {
    fetchMock.mockImplementation(
      fakeServer({
        [`GET /api/admin/users/${USER_ID}`]: { success: true, data: detail() },
        [`PUT /api/admin/users/${USER_ID}/suspension`]: () => errorAnswer(409, 'cannot_suspend_self', 'You cannot suspend yourself'),
      }),
    );
    await useAdminUserStore.getState().load(USER_ID);
    await expect(useAdminUserStore.getState().setSuspended(true, 'oops')).rejects.toThrow('You cannot suspend yourself');
    expect(useAdminUserStore.getState().detail).toEqual(detail());
    expect(fetchMock).toHaveBeenCalledTimes(2);
  });

  it('resets a service’s day and refunds with the dialog’s key', async () => {
    fetchMock.mockImplementation(
      fakeServer({
        [`GET /api/admin/users/${USER_ID}`]: { success: true, data: detail() },
        [`POST /api/admin/users/${USER_ID}/usage-reset`]: { success: true, data: usage },
        [`POST /api/admin/payments/${payment._id}/refund`]: { success: true, data: { creditNote: {}, payment } },
      }),
    );
    await useAdminUserStore.getState().load(USER_ID);
    await useAdminUserStore.getState().resetUsage('webSearches', 'outage');
    await useAdminUserStore.getState().refund(payment._id, { amount: 7.7, reason: 'complaint', endPlan: true }, 'key-1');
    expect(bodyOf(1)).toEqual({ service: 'webSearches', reason: 'outage' });
    expect(urls()[2]).toBe(`/api/admin/users/${USER_ID}`);
    expect(bodyOf(3)).toEqual({ amount: 7.7, reason: 'complaint', endPlan: true });
    expect(headerOf(3, 'Idempotency-Key')).toBe('key-1');
    expect(urls()[4]).toBe(`/api/admin/users/${USER_ID}`);
  });
});
