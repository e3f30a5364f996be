import { beforeEach, describe, expect, it, vi } from 'vitest';
import { startSocketRouter } from '@/app/socket-router';
import { useAuthStore } from '@/features/auth';
import { chatSocket } from '@/lib/socket';
import type { SocketEventMap, SocketEventType } from '@/lib/socket-protocol';
import { anna, jsonResponse } from '@/test/fixtures';
import type { Usage } from '@/types/generated';
import { fakeServer, subscriptionOn } from '../testing/fixtures';
import { useSubscriptionStore } from './subscription-store';

const fetchMock = vi.fn<typeof fetch>();
const store = () => useSubscriptionStore.getState();

function frame<K extends SocketEventType>(type: K, payload: SocketEventMap[K]) {
  (chatSocket as unknown as { dispatch(t: string, p: unknown): void }).dispatch(type, payload);
}

function usage(used: number): Usage {
  const counter = { limit: 50, used, remaining: 50 - used, unlimited: false, resetsAt: '2025-03-15T00:00:00+00:00' };
  const service = { daily: counter, monthly: { ...counter, limit: null, remaining: null, unlimited: true } };
  return {
    hasActiveLimit: true,
    limitInfo: {
      limitType: 'free',
      startDate: '2025-03-14T00:00:00+00:00',
      endDate: '2025-03-15T00:00:00+00:00',
      monthStartDate: '2025-03-01T00:00:00+00:00',
      monthEndDate: '2025-04-01T00:00:00+00:00',
      timezone: 'UTC',
      services: { responses: service, searches: service, images: service },
    },
  };
}

const subscriptionCalls = () => fetchMock.mock.calls.filter(([url]) => url === '/api/subscription');

beforeEach(() => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset().mockImplementation(
    fakeServer({
      'GET /api/subscription': { success: true, ...subscriptionOn('base') },
      'GET /api/usage/limits': { success: true, ...usage(3) },
    }),
  );
  startSocketRouter();
  // A new user each time: the sync starts over as after a login.
  useAuthStore.setState({ status: 'anonymous', token: null, user: null, settings: null });
  useAuthStore.setState({ status: 'authenticated', token: 't', user: anna, settings: anna.settings });
});

describe('the subscription and the counters', () => {
  it('follow subscription.updated and usage.updated', () => {
    frame('subscription.updated', { subscription: subscriptionOn('pro') });
    expect(store().subscription?.subscriptionPlan.planType).toBe('pro');
    expect(store().subscriptionStatus).toBe('ready');
    frame('usage.updated', usage(7));
    expect(store().usage?.limitInfo.services.responses.daily.used).toBe(7);
    // Only the counters are kept, not the frame's type.
    expect(store().usage).toEqual(usage(7));
  });

  it('take the counters of every ready, and read the subscription again after a reconnect', async () => {
    await store().loadSubscription();
    expect(subscriptionCalls()).toHaveLength(1);
    frame('ready', { user: anna, usage: usage(1) });
    expect(store().usage?.limitInfo.services.responses.daily.used).toBe(1);
    // The session's first ready follows the login's own load: nothing was missed.
    expect(subscriptionCalls()).toHaveLength(1);
    frame('ready', { user: anna, usage: usage(2) });
    expect(store().usage?.limitInfo.services.responses.daily.used).toBe(2);
    expect(subscriptionCalls()).toHaveLength(2);
  });

  it('keep a frame over an answer that was already on its way', async () => {
    let answer: (response: Response) => void = () => undefined;
    fetchMock.mockImplementationOnce(() => new Promise<Response>((resolve) => (answer = resolve)));
    const loading = store().loadSubscription();
    expect(store().subscriptionStatus).toBe('loading');
    frame('subscription.updated', { subscription: subscriptionOn('plus') });
    answer(jsonResponse(200, { success: true, ...subscriptionOn('free') }));
    expect((await loading).subscriptionPlan.planType).toBe('plus');
    expect(store().subscription?.subscriptionPlan.planType).toBe('plus');

    fetchMock.mockImplementationOnce(() => new Promise<Response>((resolve) => (answer = resolve)));
    const counting = store().loadUsage();
    frame('usage.updated', usage(9));
    answer(jsonResponse(200, { success: true, ...usage(4) }));
    await counting;
    expect(store().usage?.limitInfo.services.responses.daily.used).toBe(9);
  });

  it('are forgotten when another user signs in', async () => {
    frame('usage.updated', usage(7));
    await store().loadSubscription();
    useAuthStore.setState({ user: { ...anna, _id: 'someone-else' } });
    expect(store().subscription).toBeNull();
    expect(store().usage).toBeNull();
    expect(store().subscriptionStatus).toBe('idle');
  });

  it('say when the counters could not be read', async () => {
    fetchMock.mockResolvedValueOnce(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
    await store().loadUsage();
    expect(store().usageStatus).toBe('error');
  });
});
