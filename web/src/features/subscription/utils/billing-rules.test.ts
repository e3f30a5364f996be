import { describe, expect, it } from 'vitest';
import { billingInfoBody } from '../api/subscription-api';
import type { BillingInfoInput } from '../api/types';
import { billingFields, billingInputFrom, emptyBillingInput, validateBillingInfo } from './billing-rules';

const complete: BillingInfoInput = {
  billingType: 'private',
  name: 'Anna Kovács',
  companyName: '',
  address: 'Fő utca 1.',
  city: 'Budapest',
  postalCode: '1011',
  country: 'HU',
  vatNumber: '',
};

describe('billing rules (SPEC §5)', () => {
  it('requires every address field for private billing', () => {
    expect(validateBillingInfo(emptyBillingInput('private'))).toEqual({
      name: 'required',
      address: 'required',
      city: 'required',
      postalCode: 'required',
      country: 'required',
    });
  });

  it('does not ask a private person for a company name or VAT number', () => {
    expect(validateBillingInfo(complete)).toEqual({});
    expect(billingFields('private')).not.toContain('companyName');
    expect(billingFields('private')).not.toContain('vatNumber');
  });

  it('requires the company name and VAT number for company billing', () => {
    expect(validateBillingInfo({ ...complete, billingType: 'company' })).toEqual({
      companyName: 'required',
      vatNumber: 'required',
    });
    expect(
      validateBillingInfo({ ...complete, billingType: 'company', companyName: 'Kovács Kft.', vatNumber: '12345678-2-41' }),
    ).toEqual({});
    expect(billingFields('company')).toEqual(expect.arrayContaining(['companyName', 'vatNumber']));
  });

  it('counts a blank field as missing, as the server trims', () => {
    expect(validateBillingInfo({ ...complete, city: '   ' })).toEqual({ city: 'required' });
  });

  it('refuses more than 200 characters, counting characters rather than UTF-16 units', () => {
    expect(validateBillingInfo({ ...complete, address: 'a'.repeat(201) })).toEqual({ address: 'tooLong' });
    expect(validateBillingInfo({ ...complete, address: '😀'.repeat(200) })).toEqual({});
  });

  it('sends company fields only for company billing, trimmed', () => {
    expect(billingInfoBody({ ...complete, name: '  Anna  ', companyName: 'Left over', vatNumber: 'x' })).toEqual({
      billingType: 'private',
      billingInfo: { name: 'Anna', address: 'Fő utca 1.', city: 'Budapest', postalCode: '1011', country: 'HU' },
    });
    expect(
      billingInfoBody({ ...complete, billingType: 'company', companyName: ' Kovács Kft. ', vatNumber: ' 12345678-2-41 ' })
        .billingInfo,
    ).toMatchObject({ companyName: 'Kovács Kft.', vatNumber: '12345678-2-41' });
  });

  it('fills the form from saved info, null company fields as empty text', () => {
    expect(
      billingInputFrom({ ...complete, companyName: null, vatNumber: null }),
    ).toEqual(complete);
    expect(billingInputFrom(null)).toEqual(emptyBillingInput('private'));
  });
});
