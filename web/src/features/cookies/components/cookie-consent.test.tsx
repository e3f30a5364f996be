import { act, fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, Outlet, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it } from 'vitest';
import { i18n } from '@/lib/i18n';
import { useCookieConsent } from '../hooks/use-cookie-consent';
import {
  CONSENT_STORAGE_KEY,
  CONSENT_VERSION,
  openCookieSettings,
  useConsentStore,
} from '../stores/consent-store';
import { CookieConsent } from './cookie-consent';

function Choices() {
  const { functional, analytics, decided } = useCookieConsent();
  return <output data-testid="choices">{JSON.stringify({ functional, analytics, decided })}</output>;
}

function renderApp(path = '/') {
  const router = createMemoryRouter(
    [
      {
        element: (
          <>
            <Outlet />
            <Choices />
            <CookieConsent />
          </>
        ),
        children: [
          { path: '/', element: <h1>Home</h1> },
          { path: '/privacy-policy', element: <h1>Policy</h1> },
        ],
      },
    ],
    { initialEntries: [path] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

const stored = () => JSON.parse(localStorage.getItem(CONSENT_STORAGE_KEY) ?? 'null') as unknown;
const choices = () => JSON.parse(screen.getByTestId('choices').textContent ?? '{}') as unknown;
const isOpen = () => screen.queryByTestId('cookie-accept-all') !== null;
const dialog = () => document.querySelector('dialog')!;

beforeEach(async () => {
  localStorage.clear();
  useConsentStore.setState({ consent: null, settingsOpen: false });
  await i18n.changeLanguage('en-US');
});

describe('CookieConsent', () => {
  it('asks on a first visit, with necessary always on and the optional ones off', () => {
    renderApp();
    expect(dialog().open).toBe(true);
    expect(screen.getByRole('heading', { name: 'Cookie settings' })).toBeDefined();
    const necessary = screen.getByRole<HTMLInputElement>('switch', { name: 'Necessary' });
    const functional = screen.getByRole<HTMLInputElement>('switch', { name: 'Functional' });
    const analytics = screen.getByRole<HTMLInputElement>('switch', { name: 'Analytics' });
    expect([necessary.checked, necessary.disabled]).toEqual([true, true]);
    expect([functional.checked, functional.disabled]).toEqual([false, false]);
    expect([analytics.checked, analytics.disabled]).toEqual([false, false]);
    expect(necessary.getAttribute('aria-describedby')).toBeTruthy();
    // Honest about today: no analytics is loaded.
    expect(screen.getByText(/loads no analytics/i)).toBeDefined();
  });

  it('"Accept all" stores every category and closes', () => {
    renderApp();
    fireEvent.click(screen.getByTestId('cookie-accept-all'));
    expect(stored()).toMatchObject({ version: CONSENT_VERSION, choices: { functional: true, analytics: true } });
    expect(isOpen()).toBe(false);
    expect(dialog().open).toBe(false);
    expect(choices()).toEqual({ functional: true, analytics: true, decided: true });
  });

  it('"Reject optional" stores only the necessary ones', () => {
    renderApp();
    fireEvent.click(screen.getByTestId('cookie-reject'));
    expect(stored()).toMatchObject({ choices: { necessary: true, functional: false, analytics: false } });
    expect(isOpen()).toBe(false);
  });

  it('"Save choices" stores the switches as set', () => {
    renderApp();
    fireEvent.click(screen.getByRole('switch', { name: 'Analytics' }));
    fireEvent.click(screen.getByTestId('cookie-save'));
    expect(stored()).toMatchObject({ choices: { functional: false, analytics: true } });
    expect(choices()).toEqual({ functional: false, analytics: true, decided: true });
  });

  it('Escape before any choice keeps only the necessary ones, as the dialog says', () => {
    renderApp();
    expect(screen.getByText(/closing this window keeps only the necessary/i)).toBeDefined();
    fireEvent(dialog(), new Event('cancel', { cancelable: true }));
    expect(stored()).toMatchObject({ choices: { functional: false, analytics: false } });
    expect(isOpen()).toBe(false);
  });

  it('is not shown once a choice is stored', () => {
    localStorage.setItem(
      CONSENT_STORAGE_KEY,
      JSON.stringify({
        version: CONSENT_VERSION,
        updatedAt: new Date().toISOString(),
        choices: { necessary: true, functional: true, analytics: false },
      }),
    );
    useConsentStore.getState().reload();
    renderApp();
    expect(isOpen()).toBe(false);
  });

  it('reopens with the current choices from openCookieSettings(); Escape then changes nothing', () => {
    renderApp();
    fireEvent.click(screen.getByRole('switch', { name: 'Functional' }));
    fireEvent.click(screen.getByTestId('cookie-save'));
    const before = stored();

    act(() => openCookieSettings());
    expect(isOpen()).toBe(true);
    expect(screen.getByRole<HTMLInputElement>('switch', { name: 'Functional' }).checked).toBe(true);
    expect(screen.getByRole<HTMLInputElement>('switch', { name: 'Analytics' }).checked).toBe(false);
    expect(screen.getByText(/your current choice was saved on/i)).toBeDefined();

    fireEvent.click(screen.getByRole('switch', { name: 'Analytics' }));
    fireEvent(dialog(), new Event('cancel', { cancelable: true }));
    expect(isOpen()).toBe(false);
    expect(stored()).toEqual(before);
  });

  it('is a banner, not a modal, on the privacy policy opened from its link, and asks again elsewhere', async () => {
    const router = renderApp();
    fireEvent.click(screen.getByRole('link', { name: 'privacy policy' }));
    expect(await screen.findByRole('heading', { name: 'Policy' })).toBeDefined();
    expect(router.state.location.hash).toBe('#cookies');
    expect(dialog().open).toBe(false);
    expect(screen.getByRole('region', { name: 'Cookie settings' })).toBeDefined();
    expect(stored()).toBeNull();

    await act(() => router.navigate('/'));
    expect(dialog().open).toBe(true);
    expect(screen.queryByRole('region', { name: 'Cookie settings' })).toBeNull();
  });

  it.each([
    ['en-US', 'Cookie settings', 'Categories', 'Analytics'],
    ['hu-HU', 'Sütibeállítások', 'Kategóriák', 'Analitika'],
  ])('%s: on the privacy policy opened directly, the same choices stand in a banner that blocks nothing', async (language, title, legend, analytics) => {
    await i18n.changeLanguage(language);
    renderApp('/privacy-policy');
    // No modal: the page around it is not inert.
    expect(dialog().open).toBe(false);
    expect(document.querySelector('[inert]')).toBeNull();
    const banner = screen.getByRole('region', { name: title });
    expect(banner.querySelector('dialog')).toBeNull();
    // The page makes room for it below its content.
    expect(screen.getByTestId('cookie-banner-spacer')).toBeDefined();
    // Every choice of the dialog: reject, save the switches, accept all.
    for (const id of ['cookie-reject', 'cookie-save', 'cookie-accept-all']) expect(screen.getByTestId(id)).toBeDefined();
    fireEvent.click(screen.getByText(legend, { selector: 'summary' }));
    fireEvent.click(screen.getByRole('switch', { name: analytics }));
    fireEvent.click(screen.getByTestId('cookie-save'));
    expect(stored()).toMatchObject({ choices: { functional: false, analytics: true } });
    expect(screen.queryByTestId('cookie-banner')).toBeNull();
    expect(screen.queryByTestId('cookie-banner-spacer')).toBeNull();
  });

  it('reopened from the settings button on the privacy policy, it is the modal dialog again', () => {
    renderApp('/privacy-policy');
    act(() => openCookieSettings());
    expect(dialog().open).toBe(true);
    expect(screen.queryByTestId('cookie-banner')).toBeNull();
  });

  it('closes when a choice is made in another tab', () => {
    renderApp();
    expect(isOpen()).toBe(true);
    localStorage.setItem(
      CONSENT_STORAGE_KEY,
      JSON.stringify({
        version: CONSENT_VERSION,
        updatedAt: new Date().toISOString(),
        choices: { necessary: true, functional: false, analytics: true },
      }),
    );
    act(() => {
      window.dispatchEvent(new StorageEvent('storage', { key: CONSENT_STORAGE_KEY }));
    });
    expect(isOpen()).toBe(false);
    expect(choices()).toEqual({ functional: false, analytics: true, decided: true });
  });

  it('speaks Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    renderApp();
    expect(screen.getByTestId('cookie-accept-all').textContent).toBe('Összes elfogadása');
    expect(screen.getByRole('switch', { name: 'Analitika' })).toBeDefined();
  });
});
