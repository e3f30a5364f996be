/**
 * SPEC §5 billing rules, mirroring the server's (docs/api.md, PUT /api/settings/billing-info):
 * every field is required and trimmed, at most 200 characters; companyName and vatNumber
 * are required for company billing and ignored for private billing.
 */
import type { BillingInfo, BillingType } from '@/types/generated';
import { MAX_BILLING_FIELD_CHARS } from '@/types/generated';
import type { BillingInfoInput } from '../api/types';

export type BillingField = Exclude<keyof BillingInfoInput, 'billingType'>;
export type BillingFieldError = 'required' | 'tooLong';
export type BillingErrors = Partial<Record<BillingField, BillingFieldError>>;

/** The fields a billing type asks for, in form order; each is required. */
export function billingFields(billingType: BillingType): BillingField[] {
  return billingType === 'company'
    ? ['name', 'companyName', 'vatNumber', 'address', 'postalCode', 'city', 'country']
    : ['name', 'address', 'postalCode', 'city', 'country'];
}

export function validateBillingInfo(input: BillingInfoInput): BillingErrors {
  const errors: BillingErrors = {};
  for (const field of billingFields(input.billingType)) {
    const value = input[field].trim();
    if (!value) errors[field] = 'required';
    else if ([...value].length > MAX_BILLING_FIELD_CHARS) errors[field] = 'tooLong';
  }
  return errors;
}

export function emptyBillingInput(billingType: BillingType = 'private'): BillingInfoInput {
  return { billingType, name: '', companyName: '', address: '', city: '', postalCode: '', country: '', vatNumber: '' };
}

/** The form's starting values from what the server holds. */
export function billingInputFrom(info: BillingInfo | null | undefined): BillingInfoInput {
  return info ? { ...emptyBillingInput(info.billingType), ...withoutNulls(info) } : emptyBillingInput();
}

function withoutNulls(info: BillingInfo): Partial<BillingInfoInput> {
  return Object.fromEntries(Object.entries(info).filter(([, value]) => value !== null));
}

/** One line: "Fő utca 1., 1011 Budapest, Hungary". */
export function formatAddress({ address, postalCode, city, country }: BillingInfo): string {
  return [address, `${postalCode} ${city}`, country].join(', ');
}
