import { act, fireEvent, render, screen, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it } from 'vitest';
import { useAuthDialogStore, useAuthStore } from '@/features/auth';
import { CookieConsent, getCookieConsent } from '@/features/cookies';
import { i18n } from '@/lib/i18n';
import { anna } from '@/test/fixtures';
import { LandingPage } from './landing-page';
import { NotFoundPage } from './not-found-page';
import { PrivacyPolicyPage } from './privacy-policy-page';

function renderPage(element: ReactNode) {
  const router = createMemoryRouter([{ path: '*', element }], { initialEntries: ['/'] });
  render(<RouterProvider router={router} />);
  return router;
}

beforeEach(async () => {
  useAuthStore.setState({ status: 'anonymous', token: null, user: null, settings: null });
  useAuthDialogStore.setState({ dialog: null, notice: null });
  await i18n.changeLanguage('en-US');
});

describe('LandingPage', () => {
  it('offers guests registration and login through the account dialogs', () => {
    renderPage(<LandingPage />);
    expect(screen.getByRole('heading', { level: 1, name: /your ai assistant/i })).toBeDefined();
    fireEvent.click(screen.getByTestId('landing-register'));
    expect(useAuthDialogStore.getState().dialog).toBe('register');
    fireEvent.click(screen.getByTestId('landing-login'));
    expect(useAuthDialogStore.getState().dialog).toBe('login');
    fireEvent.click(screen.getByTestId('landing-plans-register'));
    expect(useAuthDialogStore.getState().dialog).toBe('register');
  });

  it('shows the net euro prices of SPEC §9, VAT extra', () => {
    renderPage(<LandingPage />);
    const plans = screen.getByRole('heading', { level: 2, name: 'Plans' }).closest('section')!;
    const price = (name: string) =>
      within(plans).getByRole('heading', { level: 3, name }).closest('li')!.querySelector('p')!.textContent;
    expect(price('Free')).toMatch(/€0/);
    expect(price('Base')).toMatch(/€5/);
    expect(price('Plus')).toMatch(/€10/);
    expect(price('Pro')).toMatch(/€20/);
    expect(within(plans).getByText(/net, per month; VAT is added/i)).toBeDefined();
  });

  it('shows forint prices in Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    renderPage(<LandingPage />);
    const text = screen.getByRole('heading', { level: 2, name: 'Csomagok' }).closest('section')!.textContent;
    for (const amount of ['0', '1500', '3000', '6000']) expect(text).toMatch(new RegExp(`${amount}\\s?Ft`));
    expect(screen.getByTestId('landing-register').textContent).toBe('Kezdje el ingyen');
  });

  it('links to the privacy policy', () => {
    renderPage(<LandingPage />);
    expect(screen.getByRole('link', { name: 'privacy policy' }).getAttribute('href')).toBe('/privacy-policy');
  });

  it('sends signed-in users to the chat instead', () => {
    useAuthStore.setState({ status: 'authenticated', token: 't', user: anna, settings: anna.settings });
    renderPage(<LandingPage />);
    expect(screen.getByRole('link', { name: 'Go to chat' }).getAttribute('href')).toBe('/chat');
    expect(screen.queryByTestId('landing-register')).toBeNull();
    expect(screen.queryByTestId('landing-login')).toBeNull();
    expect(screen.getByRole('link', { name: 'Settings' }).getAttribute('href')).toBe('/settings');
  });
});

describe('PrivacyPolicyPage', () => {
  it('covers what SPEC §1 asks for, under clear headings', () => {
    renderPage(<PrivacyPolicyPage />);
    const policy = screen.getByTestId('privacy-policy');
    expect(within(policy).getByRole('heading', { level: 1, name: 'Privacy policy' })).toBeDefined();
    const headings = within(policy)
      .getAllByRole('heading', { level: 2 })
      .map((h) => h.textContent);
    expect(headings).toEqual([
      'Contents',
      'Who is responsible for your data',
      'What data we process',
      'Cookies and local storage',
      'Legal bases',
      'How long we keep data',
      'Your rights',
      'Children',
      'Who receives your data',
      'International transfers',
      'Security',
      'Changes to this policy',
    ]);
    const text = policy.textContent;
    expect(text).toMatch(/not intended for people under 16/);
    expect(text).toMatch(/up to 24 months/);
    expect(text).toMatch(/Last updated: /);
    expect(text).toMatch(/supervisory authority/);
    // The operator's details are visibly left to fill in.
    expect(within(policy).getAllByText(/filled in by the operator/).length).toBeGreaterThanOrEqual(4);
    expect(within(policy).getByRole('link', { name: 'profile' }).getAttribute('href')).toBe('/profile');
    expect(within(policy).getByRole('link', { name: 'Cookies and local storage' }).getAttribute('href')).toBe(
      '#cookies',
    );
  });

  it('reopens the cookie dialog from its cookies section', () => {
    renderPage(
      <>
        <PrivacyPolicyPage />
        <CookieConsent />
      </>,
    );
    fireEvent.click(screen.getByTestId('cookie-reject'));
    expect(screen.queryByTestId('cookie-reject')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Cookie settings' }));
    expect(screen.getByTestId('cookie-accept-all')).toBeDefined();
    fireEvent.click(screen.getByTestId('cookie-accept-all'));
    expect(getCookieConsent()).toMatchObject({ decided: true, functional: true, analytics: true });
  });

  it('is in Hungarian too', async () => {
    await i18n.changeLanguage('hu-HU');
    renderPage(<PrivacyPolicyPage />);
    expect(screen.getByRole('heading', { level: 1, name: 'Adatvédelmi szabályzat' })).toBeDefined();
    expect(screen.getByTestId('privacy-policy').textContent).toMatch(/16 év alatti/);
  });
});

describe('NotFoundPage', () => {
  it('says so kindly and leads home', async () => {
    renderPage(<NotFoundPage />);
    expect(screen.getByRole('heading', { level: 1, name: 'Page not found' })).toBeDefined();
    const home = screen.getByRole('link', { name: 'Back to the home page' });
    expect(home.getAttribute('href')).toBe('/');
    await act(async () => {
      await i18n.changeLanguage('hu-HU');
    });
    expect(screen.getByRole('link', { name: 'Vissza a kezdőlapra' })).toBeDefined();
  });
});
