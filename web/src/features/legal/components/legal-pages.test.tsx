import { act, fireEvent, render, screen, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthDialogStore, useAuthStore } from '@/features/auth';
import { CookieConsent, getCookieConsent } from '@/features/cookies';
import { i18n } from '@/lib/i18n';
import { anna, jsonResponse } from '@/test/fixtures';
import { LandingPage } from './landing-page';
import { NotFoundPage } from './not-found-page';
import { PrivacyPolicyPage } from './privacy-policy-page';

const off = { googleWebSearch: false, openaiWebSearch: false, documentProcessing: false, projectManagement: false };
const on = { googleWebSearch: true, openaiWebSearch: true, documentProcessing: true, projectManagement: true };
/** The public catalogue as the server answers it: no feature works yet. */
function plan(planType: string, name: string, eur: number, huf: number, daily: number | null, features: typeof on) {
  const price = (net: number) => ({ net, vat: 0, total: net });
  const limit = { daily, monthly: null };
  return {
    planType,
    name,
    features: { ...features, imageGeneration: features.openaiWebSearch },
    available: { ...off, imageGeneration: false, imageUpload: false },
    limits: { responseLimit: limit, webSearchLimit: limit, imageGenerationLimit: limit },
    maxImagesPerMessage: 5,
    chatModels: ['gpt-4o-mini'],
    prices: { EUR: price(eur), HUF: price(huf) },
  };
}
const plansAnswer = {
  success: true,
  data: [
    plan('free', 'Free', 0, 0, 50, off),
    plan('base', 'Base', 5, 1500, 300, on),
    plan('plus', 'Plus', 10, 3000, 1000, on),
    plan('pro', 'Pro', 20, 6000, null, on),
  ],
};

function renderPage(element: ReactNode) {
  const router = createMemoryRouter([{ path: '*', element }], { initialEntries: ['/'] });
  render(<RouterProvider router={router} />);
  return router;
}

beforeEach(async () => {
  // The landing page's plans come from the public catalogue.
  vi.stubGlobal(
    'fetch',
    vi.fn<typeof fetch>(() => Promise.resolve(jsonResponse(200, plansAnswer))),
  );
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

  it('shows the net euro prices of SPEC §9, VAT extra', async () => {
    renderPage(<LandingPage />);
    const plans = screen.getByRole('heading', { level: 2, name: 'Plans' }).closest('section')!;
    await within(plans).findByRole('heading', { level: 3, name: 'Pro' });
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
    await screen.findByRole('heading', { level: 3, name: 'Pro' });
    const text = screen.getByRole('heading', { level: 2, name: 'Csomagok' }).closest('section')!.textContent;
    for (const amount of ['0', '1500', '3000', '6000']) expect(text).toMatch(new RegExp(`${amount}\\s?Ft`));
    expect(screen.getByTestId('landing-register').textContent).toBe('Kezdje el ingyen');
  });

  it('lists only what works, from the catalogue; the rest of a plan is coming soon', async () => {
    renderPage(<LandingPage />);
    const pro = await screen.findByTestId('plan-summary-pro');
    expect(pro.textContent).toContain('Unlimited messages');
    expect(pro.textContent).toContain('Models: gpt-4o-mini');
    expect(within(pro).getByText(/^Coming soon \(not available yet\):/).textContent).toContain('Web search');
    expect(within(pro).queryByRole('listitem', { name: /web search/i })).toBeNull();
    expect(within(pro).getAllByRole('listitem').map((item) => item.textContent)).toEqual([
      'Unlimited messages',
      'Models: gpt-4o-mini',
    ]);
    expect(screen.getByTestId('plan-summary-free').textContent).toContain('50 messages a day');
    const section = screen.getByRole('heading', { level: 2, name: 'Plans' }).closest('section')!.textContent;
    expect(section).not.toMatch(/5 images|Google search|searches and images/);
  });

  it('lists web search once the server has a search provider, and Google search only when that one has', async () => {
    const searching = {
      ...plansAnswer,
      data: plansAnswer.data.map((p) => ({ ...p, available: { ...p.available, openaiWebSearch: true } })),
    };
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(() => Promise.resolve(jsonResponse(200, searching))),
    );
    renderPage(<LandingPage />);
    const pro = await screen.findByTestId('plan-summary-pro');
    expect(within(pro).getAllByRole('listitem').map((item) => item.textContent)).toContain('Web search');
    const soon = within(pro).getByText(/^Coming soon \(not available yet\):/).textContent;
    expect(soon).not.toContain('Web search');
    expect(soon).toContain('Google web search');
    expect(within(screen.getByTestId('plan-summary-free')).queryByText('Web search')).toBeNull();
  });

  it('lists image generation as working once the server makes images, not as coming soon, in both languages', async () => {
    const making = {
      ...plansAnswer,
      data: plansAnswer.data.map((p) => ({ ...p, available: { ...p.available, imageGeneration: true } })),
    };
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(() => Promise.resolve(jsonResponse(200, making))),
    );
    renderPage(<LandingPage />);
    const pro = await screen.findByTestId('plan-summary-pro');
    expect(within(pro).getAllByRole('listitem').map((item) => item.textContent)).toContain('Image generation');
    expect(within(pro).getByText(/^Coming soon \(not available yet\):/).textContent).not.toContain('Image generation');
    expect(screen.getByTestId('plan-summary-free').textContent).not.toContain('Image generation');
    await act(() => i18n.changeLanguage('hu-HU'));
    const hu = screen.getByTestId('plan-summary-pro');
    expect(within(hu).getAllByRole('listitem').map((item) => item.textContent)).toContain('Képgenerálás');
    expect(within(hu).getByText(/^Hamarosan \(még nem érhető el\):/).textContent).not.toContain('Képgenerálás');
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
