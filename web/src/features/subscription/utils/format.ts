/** Money and dates in the interface language. */
import type { Currency } from '@/types/generated';

const moneyFormats = new Map<string, Intl.NumberFormat>();

/**
 * Amounts arrive in major units. EUR always shows its cents; HUF, usually whole forints,
 * shows fillér only when there are some (ICU would otherwise round 12.7 Ft to 13 Ft).
 */
export function formatMoney(amount: number, currency: Currency, locale: string): string {
  const key = `${locale}|${currency}`;
  let format = moneyFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      minimumFractionDigits: currency === 'EUR' ? 2 : 0,
      maximumFractionDigits: 2,
    });
    moneyFormats.set(key, format);
  }
  return format.format(amount);
}

/** "27%" */
export function formatPercent(rate: number, locale: string): string {
  return new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 2 }).format(rate);
}

export function formatNumber(value: number, locale: string): string {
  return new Intl.NumberFormat(locale).format(value);
}

/** A day, e.g. "April 14, 2025" / "2025. április 14.". */
export function formatDate(iso: string, locale: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long' }).format(new Date(iso));
}

/** A day and a time, for invoices. */
export function formatDateTime(iso: string, locale: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));
}

/** The currency a user pays in unless they choose: the server's own default (docs/api.md). */
export function defaultCurrency(language: string): Currency {
  return language.toLowerCase().startsWith('hu') ? 'HUF' : 'EUR';
}
