/** Money and dates in the interface language (money, numbers and times: `@/lib/format`). */
import type { Currency } from '@/types/generated';

export { formatDateTime, formatMoney, formatNumber } from '@/lib/format';

/** "27%" */
export function formatPercent(rate: number, locale: string): string {
  return new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 2 }).format(rate);
}

/** A day, e.g. "April 14, 2025" / "2025. április 14.". */
export function formatDate(iso: string, locale: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long' }).format(new Date(iso));
}

/** The currency a user pays in unless they choose: the server's own default (docs/api.md). */
export function defaultCurrency(language: string): Currency {
  return language.toLowerCase().startsWith('hu') ? 'HUF' : 'EUR';
}
