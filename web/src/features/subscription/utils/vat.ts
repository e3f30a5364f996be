import type { TFunction } from 'i18next';
import type { VatEstimate } from '@/types/generated';
import { formatPercent } from './format';

/** "VAT 27%", "No VAT: reverse charge", "No VAT (outside the EU)". */
export function vatLabel(vat: VatEstimate, locale: string, t: TFunction<'subscription'>): string {
  switch (vat.treatment) {
    case 'reverse_charge':
      return t('vat.reverseCharge');
    case 'outside_eu':
      return t('vat.outsideEu');
    default:
      return t('vat.standard', { rate: formatPercent(vat.rate, locale) });
  }
}
