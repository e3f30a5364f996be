import { fireEvent, render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { jsonResponse } from '@/test/fixtures';
import { initialSubscriptionState, useSubscriptionStore } from '../stores/subscription-store';
import { billingInfo } from '../testing/fixtures';
import { BillingForm } from './billing-form';

const fetchMock = vi.fn<typeof fetch>();

const type = (label: string, value: string) => fireEvent.change(screen.getByLabelText(label), { target: { value } });
const save = () => fireEvent.click(screen.getByTestId('billing-save'));
const sentBody = () => JSON.parse(fetchMock.mock.calls[0]?.[1]?.body as string) as unknown;

function fillPrivate() {
  type('Name', 'Anna Kovács');
  type('Address', 'Fő utca 1.');
  type('Postal code', '1011');
  type('City', 'Budapest');
  type('Country', 'HU');
}

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  useSubscriptionStore.setState(initialSubscriptionState);
  await i18n.changeLanguage('en-US');
});

describe('BillingForm', () => {
  it('asks a private person for no company name or VAT number', () => {
    render(<BillingForm initial={null} onSaved={vi.fn()} />);
    expect(screen.getByLabelText('Private person')).toHaveProperty('checked', true);
    expect(screen.queryByLabelText('Company name')).toBeNull();
    expect(screen.queryByLabelText('VAT number')).toBeNull();
  });

  it('shows every missing field and sends nothing', async () => {
    render(<BillingForm initial={null} onSaved={vi.fn()} />);
    save();
    expect((await screen.findByRole('alert')).textContent).toBe('Please fill in all required fields correctly');
    for (const text of ['Name is required', 'Address is required', 'City is required', 'Postal code is required', 'Country is required']) {
      expect(screen.getByText(text)).toBeDefined();
    }
    expect(screen.getByLabelText('Name').getAttribute('aria-invalid')).toBe('true');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('requires the company name and VAT number for company billing', async () => {
    render(<BillingForm initial={null} onSaved={vi.fn()} />);
    fireEvent.click(screen.getByLabelText('Company'));
    fillPrivate();
    save();
    expect(await screen.findByText('Company name is required')).toBeDefined();
    expect(screen.getByText('VAT number is required')).toBeDefined();
    expect(screen.queryByText('Name is required')).toBeNull();
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('saves private billing without the company fields', async () => {
    fetchMock.mockResolvedValue(jsonResponse(200, { success: true, billingInfo }));
    const onSaved = vi.fn();
    render(<BillingForm initial={null} onSaved={onSaved} />);
    fillPrivate();
    save();
    await vi.waitFor(() => expect(onSaved).toHaveBeenCalledWith(billingInfo));
    expect(fetchMock.mock.calls[0]?.[0]).toBe('/api/settings/billing-info');
    expect(fetchMock.mock.calls[0]?.[1]?.method).toBe('PUT');
    expect(sentBody()).toEqual({
      billingType: 'private',
      billingInfo: { name: 'Anna Kovács', address: 'Fő utca 1.', postalCode: '1011', city: 'Budapest', country: 'HU' },
    });
    expect(useSubscriptionStore.getState().billingInfo).toEqual(billingInfo);
  });

  it('saves company billing with the company name and VAT number', async () => {
    const company = { ...billingInfo, billingType: 'company', companyName: 'Kovács Kft.', vatNumber: '12345678-2-41' };
    fetchMock.mockResolvedValue(jsonResponse(200, { success: true, billingInfo: company }));
    const onSaved = vi.fn();
    render(<BillingForm initial={null} onSaved={onSaved} />);
    fireEvent.click(screen.getByLabelText('Company'));
    fillPrivate();
    type('Company name', 'Kovács Kft.');
    type('VAT number', '12345678-2-41');
    save();
    await vi.waitFor(() => expect(onSaved).toHaveBeenCalled());
    expect(sentBody()).toMatchObject({
      billingType: 'company',
      billingInfo: { companyName: 'Kovács Kft.', vatNumber: '12345678-2-41' },
    });
  });

  it('puts the server’s refusal of a field under that field', async () => {
    fetchMock.mockResolvedValue(
      jsonResponse(400, { success: false, code: 'field_too_long', message: 'City must be at most 200 characters', field: 'city' }),
    );
    render(<BillingForm initial={billingInfo} onSaved={vi.fn()} />);
    save();
    const city = screen.getByLabelText('City');
    await vi.waitFor(() => expect(city.getAttribute('aria-invalid')).toBe('true'));
    const form = screen.getByTestId('billing-form');
    expect(within(form).getByText('City must be at most 200 characters')).toBeDefined();
  });

  it('starts from the saved billing info', () => {
    render(<BillingForm initial={billingInfo} onSaved={vi.fn()} />);
    expect(screen.getByLabelText('Name')).toHaveProperty('value', 'Anna Kovács');
    expect(screen.getByLabelText('City')).toHaveProperty('value', 'Budapest');
  });
});
