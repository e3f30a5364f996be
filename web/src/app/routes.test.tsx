import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '@/features/auth';
import { i18n } from '@/lib/i18n';
import { anna, jsonResponse } from '@/test/fixtures';
import type { AdminStats } from '@/types/generated';
import { routes } from './routes';

function renderAt(path: string) {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  render(<RouterProvider router={router} />);
  return router;
}

function signIn(user = anna) {
  useAuthStore.setState({ status: 'authenticated', token: 't', user, settings: user.settings });
}

const admin = { ...anna, role: 'admin' as const };

afterEach(() => {
  vi.unstubAllGlobals();
});

beforeEach(async () => {
  useAuthStore.setState({ status: 'anonymous', token: null, user: null, settings: null });
  await i18n.changeLanguage('en-US');
});

describe('guests (SPEC §2)', () => {
  it('may open the index page', async () => {
    renderAt('/');
    expect(await screen.findByRole('heading', { level: 1, name: /your ai assistant/i })).toBeDefined();
    expect(screen.getAllByRole('button', { name: 'Log in' }).length).toBeGreaterThan(0);
  });

  it('may open the privacy policy', async () => {
    const router = renderAt('/privacy-policy');
    expect(await screen.findByRole('heading', { level: 1, name: 'Privacy policy' })).toBeDefined();
    expect(router.state.location.pathname).toBe('/privacy-policy');
  });

  it('may open a share link, and a revoked one says it was not found', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.resolve(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }))),
    );
    const router = renderAt('/share/abcDEF123_-');
    expect(await screen.findByRole('heading', { level: 1, name: 'This shared link was not found' }, { timeout: 5000 })).toBeDefined();
    expect(router.state.location.pathname).toBe('/share/abcDEF123_-');
    expect(vi.mocked(fetch).mock.calls[0]![0]).toBe('/api/shared/abcDEF123_-');
  });

  it.each(['/admin', '/admin/users', '/admin/users/abc', '/admin/audit', '/chat', '/chat/abc', '/profile', '/settings', '/payment/status', '/payment-success', '/payment-cancel', '/nope'])(
    'are redirected from %s to /',
    async (path) => {
      const router = renderAt(path);
      expect(await screen.findByRole('heading', { level: 1, name: /your ai assistant/i })).toBeDefined();
      expect(router.state.location.pathname).toBe('/');
    },
  );
});

describe('signed-in users', () => {
  it.each([
    ['/chat', 'Chat'],
    ['/chat/0195', 'Chat'],
    ['/profile', 'Profile'],
    ['/settings', 'Settings'],
    ['/payment/status', 'Payment status'],
    ['/payment-success', 'No payment to confirm'],
    ['/payment-cancel', 'Payment cancelled'],
  ])('open %s inside the main layout', async (path, heading) => {
    signIn();
    renderAt(path);
    // The first test of a lazy page transforms its whole feature (the chat's is the
    // largest): on a busy machine that alone can take longer than findBy's default second.
    expect(await screen.findByRole('heading', { level: 1, name: heading }, { timeout: 5000 })).toBeDefined();
    expect(screen.getAllByRole('navigation', { name: 'Main navigation' }).length).toBeGreaterThan(0);
    expect(screen.getByRole('button', { name: /account menu for anna/i })).toBeDefined();
  });

  it('see the not-found page, outside the main layout, for unknown paths', async () => {
    signIn();
    renderAt('/no/such/page');
    expect(await screen.findByRole('heading', { level: 1, name: 'Page not found' })).toBeDefined();
    expect(screen.queryByRole('navigation', { name: 'Main navigation' })).toBeNull();
    expect(screen.getByRole('link', { name: 'Back to the home page' }).getAttribute('href')).toBe('/');
  });

  it('wait for the stored token’s profile instead of being redirected', async () => {
    useAuthStore.setState({ status: 'loading', token: 't' });
    const router = renderAt('/chat');
    expect(await screen.findByRole('status')).toBeDefined();
    expect(router.state.location.pathname).toBe('/chat');
  });
});

describe('the operator console (issue 34)', () => {
  it.each(['/admin', '/admin/users', '/admin/users/0195', '/admin/audit', '/admin/nope'])(
    'is the not-found page at %s for a signed-in user who is not an admin',
    async (path) => {
      const fetchMock = vi.fn<typeof fetch>(() => Promise.resolve(jsonResponse(403, { success: false, code: 'forbidden', message: 'no' })));
      vi.stubGlobal('fetch', fetchMock);
      signIn();
      const router = renderAt(path);
      expect(await screen.findByRole('heading', { level: 1, name: 'Page not found' })).toBeDefined();
      expect(screen.queryByRole('navigation', { name: 'Main navigation' })).toBeNull();
      expect(router.state.location.pathname).toBe(path);
      // Nothing of the console is asked for.
      expect(fetchMock.mock.calls.filter(([url]) => (url as string).startsWith('/api/admin'))).toEqual([]);
    },
  );

  it('shows an admin the dashboard at /admin, inside the main layout', async () => {
    // A range with nothing in it: no chart to draw on jsdom's missing canvas.
    const quiet: AdminStats = {
      from: '2025-03-14',
      to: '2025-03-14',
      timeZone: 'UTC',
      days: [],
      activeUsers: { daily: 0, weekly: 0, monthly: 0 },
      byModel: [],
      byPlan: [],
      topUsers: [],
      subscriptions: [],
      mrr: { eur: 0, huf: 0 },
    };
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(jsonResponse(200, { success: true, data: quiet }))));
    signIn(admin);
    renderAt('/admin');
    expect(await screen.findByRole('heading', { level: 1, name: 'Overview' }, { timeout: 5000 })).toBeDefined();
    expect(screen.getAllByRole('navigation', { name: 'Main navigation' }).length).toBeGreaterThan(0);
    expect(screen.getByRole('link', { name: 'Overview' }).getAttribute('aria-current')).toBe('page');
    // The page asks once it has rendered (a passive effect, which React may run a moment later).
    await waitFor(() => expect(vi.mocked(fetch).mock.calls.some(([url]) => (url as string).startsWith('/api/admin/stats?'))).toBe(true));
  });

  it('shows an admin the users table at /admin/users', async () => {
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(jsonResponse(200, { success: true, data: [], nextCursor: null }))));
    signIn(admin);
    renderAt('/admin/users');
    expect(await screen.findByRole('heading', { level: 1, name: 'Users' }, { timeout: 5000 })).toBeDefined();
    expect(screen.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page');
    expect(vi.mocked(fetch).mock.calls.some(([url]) => url === '/api/admin/users')).toBe(true);
  });

  it('is the not-found page for an unknown path under /admin, for an admin too', async () => {
    signIn(admin);
    renderAt('/admin/nope');
    expect(await screen.findByRole('heading', { level: 1, name: 'Page not found' })).toBeDefined();
  });

  it('is in the profile menu for admins only', async () => {
    signIn();
    renderAt('/profile');
    fireEvent.click(await screen.findByRole('button', { name: /account menu for anna/i }));
    expect(screen.queryByRole('link', { name: 'Admin' })).toBeNull();
    cleanup();

    signIn(admin);
    renderAt('/profile');
    fireEvent.click(await screen.findByRole('button', { name: /account menu for anna/i }));
    expect(screen.getByRole('link', { name: 'Admin' }).getAttribute('href')).toBe('/admin');
  });

  it('is called Adminisztráció in the Hungarian profile menu', async () => {
    await i18n.changeLanguage('hu-HU');
    signIn(admin);
    renderAt('/profile');
    fireEvent.click(await screen.findByRole('button', { name: /anna/i }));
    expect(screen.getByRole('link', { name: 'Adminisztráció' }).getAttribute('href')).toBe('/admin');
  });
});
