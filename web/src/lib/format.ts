/** Money, numbers and times in the interface language (pass `useLocale()`'s locale). */
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

export function formatNumber(value: number, locale: string): string {
  return new Intl.NumberFormat(locale).format(value);
}

/** "Mar 14, 2025, 10:03 AM"; an unreadable value is shown as it came. */
export function formatDateTime(iso: string, locale: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}
