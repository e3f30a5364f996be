import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '@/features/auth';
import { startSocketRouter } from '@/app/socket-router';
import { useSubscriptionStore } from '@/features/subscription';
import { currentLanguage, i18n } from '@/lib/i18n';
import { chatSocket } from '@/lib/socket';
import { setToken } from '@/lib/token';
import { anna, jsonResponse } from '@/test/fixtures';
import type { LimitInfo, Settings, User } from '@/types/generated';
import { DEFAULT_LOCAL_SETTINGS, useLocalSettingsStore } from '../stores/local-settings-store';
import { SettingsPage } from './settings-page';

const cookies = vi.hoisted(() => ({ open: vi.fn() }));
vi.mock('@/features/cookies', async (importOriginal) => {
  const actual: Record<string, unknown> = await importOriginal();
  return { ...actual, openCookieSettings: cookies.open };
});

// Another feature's section, built and tested there: only where it is placed matters here.
// Its store is the real one: the usage section reads the counters from it.
vi.mock('@/features/subscription', async (importOriginal) => {
  const actual: Record<string, unknown> = await importOriginal();
  return { ...actual, SubscriptionSection: () => <p>subscription section</p> };
});

const fetchMock = vi.fn<typeof fetch>();
const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
type Handler = (init: RequestInit | undefined) => Response;
let routes: Record<string, Handler>;

function answer(method: string, path: string, handler: Handler | Response) {
  routes[`${method} ${path}`] = typeof handler === 'function' ? handler : () => handler.clone();
}

function bodies(method: string, path: string): unknown[] {
  return fetchMock.mock.calls
    .filter(([url, init]) => url === `/api${path}` && (init?.method ?? 'GET') === method)
    .map(([, init]): unknown => JSON.parse(init!.body as string));
}

function serverFrame(type: string, payload: unknown) {
  act(() => (chatSocket as unknown as { dispatch(t: string, p: unknown): void }).dispatch(type, payload));
}

const settings: Settings = {
  language: 'en-US',
  aiPersonalization: { enabled: false, userName: '', userInfo: '' },
};
const user: User = { ...anna, settings };

function counter(limit: number | null, used: number) {
  return {
    limit,
    used,
    remaining: limit === null ? null : Math.max(0, limit - used),
    unlimited: limit === null,
    resetsAt: '2025-03-15T00:00:00+00:00',
  };
}

function limits(dailyResponses: number): LimitInfo {
  return {
    limitType: 'free',
    startDate: '2025-03-14T00:00:00+00:00',
    endDate: '2025-03-15T00:00:00+00:00',
    monthStartDate: '2025-03-01T00:00:00+00:00',
    monthEndDate: '2025-04-01T00:00:00+00:00',
    timezone: 'UTC',
    services: {
      responses: { daily: counter(50, dailyResponses), monthly: counter(null, 37) },
      searches: { daily: counter(0, 0), monthly: counter(0, 0) },
      images: { daily: counter(0, 0), monthly: counter(0, 0) },
    },
  };
}

function renderPage(path = '/settings') {
  const router = createMemoryRouter(
    [
      { path: '/', element: <h1>home</h1> },
      { path: '/profile', element: <h1>profile</h1> },
      { path: '/settings', element: <SettingsPage /> },
    ],
    { initialEntries: [path] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

const section = (name: string) => screen.getByRole('region', { name });

beforeEach(async () => {
  routes = {};
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  fetchMock.mockImplementation((input, init) => {
    const handler = routes[`${init?.method ?? 'GET'} ${urlOf(input).replace(/^\/api/, '')}`];
    return Promise.resolve(
      handler ? handler(init) : jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }),
    );
  });
  answer('GET', '/usage/limits', () => jsonResponse(200, { success: true, hasActiveLimit: true, limitInfo: limits(12) }));
  setToken('t', { remember: true });
  useAuthStore.setState({ status: 'authenticated', token: 't', user, settings });
  useLocalSettingsStore.setState(DEFAULT_LOCAL_SETTINGS);
  // The counters' frames reach the store as they do from start-up.
  startSocketRouter();
  useSubscriptionStore.getState().reset();
  cookies.open.mockReset();
  await i18n.changeLanguage('en-US');
});

describe('settings page', () => {
  it('has the account, app, usage, AI personalisation, privacy and subscription sections', async () => {
    renderPage();
    expect(screen.getByRole('heading', { level: 1, name: 'Settings' })).toBeDefined();
    for (const name of ['Account', 'App', 'Usage limits', 'AI personalisation', 'Privacy']) {
      expect(section(name)).toBeDefined();
    }
    expect(document.getElementById('subscription')?.textContent).toBe('subscription section');
    const account = section('Account');
    expect(within(account).getByText('anna@example.com')).toBeDefined();
    expect(within(account).getByRole('link', { name: 'Edit profile' }).getAttribute('href')).toBe('/profile');
    await screen.findByTestId('usage-responses-daily');
  });

  it('logs out from the account section', async () => {
    const router = renderPage();
    fireEvent.click(within(section('Account')).getByRole('button', { name: 'Log out' }));
    await vi.waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(useAuthStore.getState().status).toBe('anonymous');
  });
});

describe('app settings', () => {
  it('saves the language to the account and switches the interface at once', async () => {
    answer('PUT', '/settings', jsonResponse(200, { success: true, settings: { ...settings, language: 'hu-HU' } }));
    renderPage();
    fireEvent.change(screen.getByTestId('settings-language'), { target: { value: 'hu-HU' } });
    expect(await screen.findByRole('heading', { level: 1, name: 'Beállítások' })).toBeDefined();
    expect(currentLanguage()).toBe('hu-HU');
    await vi.waitFor(() => expect(bodies('PUT', '/settings')).toEqual([{ language: 'hu-HU' }]));
    await vi.waitFor(() => expect(useAuthStore.getState().settings?.language).toBe('hu-HU'));
    expect(screen.getByTestId<HTMLSelectElement>('settings-language').value).toBe('hu-HU');
  });

  it('follows a language change from another tab (settings.updated)', async () => {
    renderPage();
    // What src/app/bootstrap.ts does with the frame.
    act(() => useAuthStore.getState().applySettings({ ...settings, language: 'hu-HU' }));
    expect(await screen.findByRole('heading', { level: 1, name: 'Beállítások' })).toBeDefined();
    expect(screen.getByTestId<HTMLSelectElement>('settings-language').value).toBe('hu-HU');
  });

  it('keeps theme, font size and notifications in this browser only', async () => {
    renderPage();
    const theme = screen.getByTestId<HTMLSelectElement>('settings-theme');
    expect(theme.value).toBe('light');
    expect([...theme.options].map((o) => o.value)).toEqual(['auto', 'light', 'dark']);
    fireEvent.change(theme, { target: { value: 'dark' } });
    fireEvent.change(screen.getByLabelText('Font size'), { target: { value: 'large' } });
    fireEvent.click(screen.getByLabelText('Notifications'));
    expect(useLocalSettingsStore.getState()).toMatchObject({ theme: 'dark', fontSize: 'large', notifications: false });
    expect(fetchMock.mock.calls.filter(([, init]) => init?.method === 'PUT')).toHaveLength(0);
    await screen.findByTestId('usage-responses-daily');
  });

  it('shows a change made in another tab', async () => {
    renderPage();
    await act(async () => {
      useLocalSettingsStore.setState({ theme: 'auto', fontSize: 'small', notifications: false });
      await Promise.resolve();
    });
    expect(screen.getByTestId<HTMLSelectElement>('settings-theme').value).toBe('auto');
    expect(screen.getByLabelText<HTMLSelectElement>('Font size').value).toBe('small');
    expect(screen.getByLabelText<HTMLInputElement>('Notifications').checked).toBe(false);
    await screen.findByTestId('usage-responses-daily');
  });
});

describe('notifications setting', () => {
  function stubNotification(permission: NotificationPermission, asked: NotificationPermission = permission) {
    const requestPermission = vi.fn(() => Promise.resolve(asked));
    vi.stubGlobal('Notification', Object.assign(function Notification() {}, { permission, requestPermission }));
    return requestPermission;
  }

  it('asks for the permission when turned on, in answer to the click only', async () => {
    useLocalSettingsStore.setState({ notifications: false });
    const requestPermission = stubNotification('default', 'granted');
    renderPage();
    expect(requestPermission).not.toHaveBeenCalled();
    await act(async () => {
      fireEvent.click(screen.getByLabelText('Notifications'));
      await Promise.resolve();
    });
    expect(requestPermission).toHaveBeenCalledTimes(1);
    expect(useLocalSettingsStore.getState().notifications).toBe(true);
    expect(screen.queryByTestId('settings-notifications-blocked')).toBeNull();
    // Turning it off asks nothing.
    fireEvent.click(screen.getByLabelText('Notifications'));
    expect(requestPermission).toHaveBeenCalledTimes(1);
    expect(useLocalSettingsStore.getState().notifications).toBe(false);
    await screen.findByTestId('usage-responses-daily');
  });

  it('says when the browser blocks notifications, and the toggle still works', async () => {
    const requestPermission = stubNotification('denied');
    renderPage();
    const toggle = screen.getByLabelText<HTMLInputElement>('Notifications');
    const blocked = screen.getByTestId('settings-notifications-blocked');
    expect(blocked.textContent).toMatch(/^Notifications are blocked in this browser/);
    expect(toggle.getAttribute('aria-describedby')).toContain(blocked.id);
    expect(toggle.disabled).toBe(false);
    fireEvent.click(toggle);
    fireEvent.click(toggle);
    expect(useLocalSettingsStore.getState().notifications).toBe(true);
    expect(requestPermission).not.toHaveBeenCalled();
    await screen.findByTestId('usage-responses-daily');
  });

  it('says it in Hungarian too', async () => {
    stubNotification('denied');
    await i18n.changeLanguage('hu-HU');
    renderPage();
    expect(screen.getByTestId('settings-notifications-blocked').textContent).toMatch(
      /^Az értesítések le vannak tiltva ebben a böngészőben/,
    );
    await screen.findByTestId('usage-responses-daily');
  });
});

describe('usage limits', () => {
  it('shows used, remaining and unlimited counters', async () => {
    renderPage();
    const daily = await screen.findByTestId('usage-responses-daily');
    expect(daily.textContent).toContain('12 / 50 used');
    expect(daily.textContent).toContain('38 remaining');
    const monthly = screen.getByTestId('usage-responses-monthly');
    expect(monthly.textContent).toContain('37 used');
    expect(monthly.textContent).toContain('Unlimited');
    expect(screen.getByTestId('usage-searches-daily').textContent).toContain('Not included in your plan');
    expect(within(section('Usage limits')).getByText('Current plan: Free')).toBeDefined();
  });

  it('updates live from usage.updated', async () => {
    renderPage();
    await screen.findByText('12 / 50 used');
    serverFrame('usage.updated', { hasActiveLimit: true, limitInfo: limits(13) });
    expect(screen.getByTestId('usage-responses-daily').textContent).toContain('13 / 50 used');
    expect(screen.getByTestId('usage-responses-daily').dataset.remaining).toBe('37');
  });

  it('does not let a late HTTP answer overwrite a newer frame', async () => {
    let resolve: (r: Response) => void = () => undefined;
    answer('GET', '/usage/limits', () => jsonResponse(200, {}));
    fetchMock.mockImplementationOnce(() => new Promise<Response>((r) => (resolve = r)));
    renderPage();
    serverFrame('usage.updated', { hasActiveLimit: true, limitInfo: limits(20) });
    await act(async () => {
      resolve(jsonResponse(200, { success: true, hasActiveLimit: true, limitInfo: limits(12) }));
      await new Promise((r) => setTimeout(r, 0));
    });
    expect(screen.getByTestId('usage-responses-daily').textContent).toContain('20 / 50 used');
  });

  it('offers a retry when loading fails', async () => {
    answer('GET', '/usage/limits', () => jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
    renderPage();
    expect(await screen.findByText('The usage limits could not be loaded.')).toBeDefined();
    answer('GET', '/usage/limits', () => jsonResponse(200, { success: true, hasActiveLimit: true, limitInfo: limits(1) }));
    fireEvent.click(within(section('Usage limits')).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('1 / 50 used')).toBeDefined();
  });
});

describe('AI personalisation', () => {
  const form = () => section('AI personalisation');

  it('refuses texts over 100 and 2000 characters without calling the server', async () => {
    renderPage();
    fireEvent.change(within(form()).getByLabelText('How should the AI address you?'), {
      target: { value: 'a'.repeat(101) },
    });
    fireEvent.change(within(form()).getByLabelText('What should the AI know about you?'), {
      target: { value: 'b'.repeat(2001) },
    });
    expect(within(form()).getByText('At most 100 characters')).toBeDefined();
    expect(within(form()).getByText('At most 2000 characters')).toBeDefined();
    expect(within(form()).getByText('2001 / 2000 characters')).toBeDefined();
    fireEvent.click(within(form()).getByRole('button', { name: 'Save' }));
    expect(within(form()).getByRole('alert').textContent).toBe('Please fill in all required fields correctly');
    expect(bodies('PUT', '/settings')).toEqual([]);
    await screen.findByTestId('usage-responses-daily');
  });

  it('saves the trimmed values and keeps what the server answers', async () => {
    const saved = { enabled: true, userName: 'Anna', userInfo: 'I work as a translator.' };
    answer('PUT', '/settings', jsonResponse(200, { success: true, settings: { ...settings, aiPersonalization: saved } }));
    renderPage();
    fireEvent.click(within(form()).getByLabelText('Use personalisation in my conversations'));
    fireEvent.change(within(form()).getByLabelText('How should the AI address you?'), { target: { value: ' Anna ' } });
    fireEvent.change(within(form()).getByLabelText('What should the AI know about you?'), {
      target: { value: 'I work as a translator.\n' },
    });
    fireEvent.click(within(form()).getByRole('button', { name: 'Save' }));
    await vi.waitFor(() => expect(useAuthStore.getState().settings?.aiPersonalization).toEqual(saved));
    expect(bodies('PUT', '/settings')).toEqual([{ aiPersonalization: saved }]);
  });

  it('puts a field error from the server next to its field', async () => {
    answer(
      'PUT',
      '/settings',
      jsonResponse(400, {
        success: false,
        code: 'validation_error',
        message: 'Please fill in all required fields correctly',
        field: 'userInfo',
      }),
    );
    renderPage();
    fireEvent.change(within(form()).getByLabelText('What should the AI know about you?'), { target: { value: 'x' } });
    fireEvent.click(within(form()).getByRole('button', { name: 'Save' }));
    const info = within(form()).getByLabelText('What should the AI know about you?');
    await vi.waitFor(() => expect(info.getAttribute('aria-invalid')).toBe('true'));
  });

  it('follows settings.updated from another tab until edited here', async () => {
    renderPage();
    act(() =>
      useAuthStore
        .getState()
        .applySettings({ ...settings, aiPersonalization: { enabled: true, userName: 'Annie', userInfo: '' } }),
    );
    const userName = within(form()).getByLabelText<HTMLInputElement>('How should the AI address you?');
    expect(userName.value).toBe('Annie');
    expect(within(form()).getByLabelText<HTMLInputElement>('Use personalisation in my conversations').checked).toBe(
      true,
    );
    fireEvent.change(userName, { target: { value: 'Mine' } });
    act(() =>
      useAuthStore
        .getState()
        .applySettings({ ...settings, aiPersonalization: { enabled: true, userName: 'Other', userInfo: '' } }),
    );
    expect(userName.value).toBe('Mine');
    await screen.findByTestId('usage-responses-daily');
  });
});

describe('privacy', () => {
  it('opens the cookie settings and links the privacy policy', async () => {
    renderPage();
    const privacy = section('Privacy');
    fireEvent.click(within(privacy).getByRole('button', { name: 'Cookie settings' }));
    expect(cookies.open).toHaveBeenCalled();
    expect(within(privacy).getByRole('link', { name: 'Privacy policy' }).getAttribute('href')).toBe('/privacy-policy');
    await screen.findByTestId('usage-responses-daily');
  });
});
