import { fireEvent, render, screen, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { initialSubscriptionState, useSubscriptionStore } from '../stores/subscription-store';
import { billingInfo, plans } from '../testing/fixtures';
import { CheckoutDialog } from './checkout-dialog';
import { PlanCard } from './plan-card';

/** Intl puts no-break spaces in amounts ("1500 Ft"); compare with plain ones. */
const text = (element: HTMLElement) => (element.textContent ?? '').replace(/\s+/g, ' ').trim();

function renderCard(planType: keyof typeof plans, choice: 'upgrade' | 'current' = 'upgrade') {
  render(<PlanCard plan={plans[planType]} vatRate={0.27} choice={choice} endDate={null} onChoose={vi.fn()} />);
  return screen.getByTestId(`plan-card-${planType}`);
}

beforeEach(async () => {
  useSubscriptionStore.setState(initialSubscriptionState);
  await i18n.changeLanguage('en-US');
});

describe('plan prices (SPEC §9: net, VAT apart)', () => {
  it('shows the net monthly price in EUR and HUF, and the VAT separately', () => {
    const card = text(renderCard('base'));
    expect(card).toContain('€5.00 net / month');
    expect(card).toContain('HUF 1,500 net / month');
    expect(card).toContain('+ 27% VAT: €1.35 · HUF 405');
    // The gross price is not what the card advertises.
    expect(card).not.toContain('6.35');
  });

  it.each([
    ['plus', '€10.00', 'HUF 3,000', '€2.70 · HUF 810'],
    ['pro', '€20.00', 'HUF 6,000', '€5.40 · HUF 1,620'],
  ] as const)('prices %s from the catalogue', (planType, eur, huf, vat) => {
    const card = text(renderCard(planType));
    expect(card).toContain(`${eur} net / month`);
    expect(card).toContain(`${huf} net / month`);
    expect(card).toContain(vat);
  });

  it('puts forints first, in Hungarian format, for hu-HU', async () => {
    await i18n.changeLanguage('hu-HU');
    const card = renderCard('plus');
    const [main, other, vat] = [...card.querySelectorAll('p')].map(text);
    expect(main).toBe('3000 Ft nettó / hó');
    expect(other).toBe('10,00 EUR nettó / hó');
    expect(vat).toBe('+ 27% áfa: 810 Ft · 2,70 EUR');
  });

  it('shows no VAT on the free plan', () => {
    const card = text(renderCard('free', 'current'));
    expect(card).toContain('€0.00 net / month');
    expect(card).toContain('No payment needed');
    expect(card).not.toContain('VAT');
  });

  it('lists only what works, and marks the rest of the plan as coming soon', () => {
    const free = renderCard('free', 'current');
    expect(text(free)).toContain('Messages50 / day');
    expect(within(free).queryByTestId('coming-soon-free')).toBeNull();
    expect(within(free).getByTestId('choose-plan-free')).toHaveProperty('disabled', true);
    const pro = renderCard('pro');
    expect(text(pro)).toContain('MessagesUnlimited');
    expect(text(pro)).toContain('Models: gpt-4o-mini');
    // Search, images and uploads do not work yet: no limits, no ticks, no "5 images".
    expect(text(pro)).not.toContain('Web searches');
    expect(text(pro)).not.toContain('Image generations');
    expect(text(pro)).not.toContain('Images per message');
    expect(pro.querySelector('[aria-label="Features"]')).toBeNull();
    const soon = within(pro).getByTestId('coming-soon-pro');
    expect(text(soon)).toContain('Coming soon (not available yet):');
    expect(text(soon)).toContain('Web search');
    expect(text(soon)).toContain('Image generation');
  });

  it('offers a feature and its limit once the catalogue says it works', () => {
    const working = { ...plans.pro, available: { ...plans.pro.available, openaiWebSearch: true } };
    render(<PlanCard plan={working} vatRate={0.27} choice="upgrade" endDate={null} onChoose={vi.fn()} />);
    const card = screen.getByTestId('plan-card-pro');
    expect(within(card).getByLabelText('Features').textContent).toContain('Web search');
    expect(text(card)).toContain('Web searches300 / day · 6,000 / month');
    expect(text(within(card).getByTestId('coming-soon-pro'))).not.toContain('Web search');
  });

  it('offers image generation with its daily and monthly limit once the server makes images, never as coming soon', async () => {
    const making = (planType: 'free' | 'base') => ({
      ...plans[planType],
      available: { ...plans[planType].available, imageGeneration: true },
    });
    render(<PlanCard plan={making('base')} vatRate={0.27} choice="upgrade" endDate={null} onChoose={vi.fn()} />);
    const card = screen.getByTestId('plan-card-base');
    expect(within(card).getByLabelText('Features').textContent).toContain('Image generation');
    expect(text(card)).toContain('Image generations5 / day · 50 / month');
    expect(text(within(card).getByTestId('coming-soon-base'))).not.toContain('Image generation');
    // A plan without it neither sells it nor promises it.
    render(<PlanCard plan={making('free')} vatRate={0.27} choice="current" endDate={null} onChoose={vi.fn()} />);
    const free = screen.getByTestId('plan-card-free');
    expect(text(free)).toContain('Image generationsNot included');
    expect(within(free).queryByLabelText('Features')).toBeNull();
    expect(within(free).queryByTestId('coming-soon-free')).toBeNull();

    await i18n.changeLanguage('hu-HU');
    const hu = screen.getByTestId('plan-card-base');
    expect(within(hu).getByLabelText('Funkciók').textContent).toContain('Képgenerálás');
    expect(text(hu)).toMatch(/Képgenerálások5 \/ nap · 50 \/ hó/);
    expect(text(within(hu).getByTestId('coming-soon-base'))).not.toContain('Képgenerálás');
  });

  it('shows a reverse-charged company no VAT', () => {
    const vat = { rate: 0, treatment: 'reverse_charge', basis: 'billingInfo', country: 'DE' } as const;
    render(<PlanCard plan={plans.base} vatRate={0} vat={vat} choice="upgrade" endDate={null} onChoose={vi.fn()} />);
    const card = text(screen.getByTestId('plan-card-base'));
    expect(card).toContain('No VAT: reverse charge (EU company)');
    expect(card).not.toContain('27%');
  });
});

describe('checkout summary', () => {
  it('shows net, VAT and total in the chosen currency', () => {
    useSubscriptionStore.setState({ vatRate: 0.27, billingInfo });
    render(
      <MemoryRouter>
        <CheckoutDialog plan={plans.plus} onClose={vi.fn()} onEditBilling={vi.fn()} />
      </MemoryRouter>,
    );
    const summary = () => {
      const region = screen.getByRole('region', { name: 'To pay now' });
      const rows = [...region.querySelectorAll('dl > div')].map((row) => [
        text(row.querySelector('dt')!),
        text(row.querySelector('dd')!),
      ]);
      return { rows: Object.fromEntries(rows) as Record<string, string>, note: text(region.querySelector('p')!) };
    };
    expect(summary()).toEqual({
      rows: { 'Net price': '€10.00', 'VAT (27%)': '€2.70', Total: '€12.70' },
      note: 'Charged every month until you cancel.',
    });
    fireEvent.click(screen.getByLabelText('HUF'));
    fireEvent.click(screen.getByLabelText('One-time payment'));
    expect(summary()).toEqual({
      rows: { 'Net price': 'HUF 3,000', 'VAT (27%)': 'HUF 810', Total: 'HUF 3,810' },
      note: 'Charged once, for 30 days.',
    });
    expect(screen.getByLabelText('PayPal')).toHaveProperty('disabled', true);
    expect(screen.getByLabelText('Credit card')).toHaveProperty('checked', true);
  });
});
