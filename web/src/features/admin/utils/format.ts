/** Dates and money in the interface language, for the console's tables. */
import { useTranslation } from 'react-i18next';
import type { Currency } from '@/types/generated';

/** The interface language, for Intl formatting; re-renders when it changes. */
export function useLocale(): string {
  const { i18n } = useTranslation();
  return i18n.resolvedLanguage ?? i18n.language;
}

/** "Mar 14, 2025, 10:03 AM"; an unreadable value is shown as it came. */
export function formatDateTime(iso: string, locale: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}

export function formatDay(iso: string, locale: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium' }).format(date);
}

/** Amounts arrive in major units; EUR always with cents, HUF with fillér only when there are some. */
export function formatMoney(amount: number, currency: Currency, locale: string): string {
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    minimumFractionDigits: currency === 'EUR' ? 2 : 0,
    maximumFractionDigits: 2,
  }).format(amount);
}

export function formatNumber(value: number, locale: string): string {
  return new Intl.NumberFormat(locale).format(value);
}

/** Money in major units without float drift: 12.7 - 5.1 is 7.6, not 7.599999999999999. */
export function subtractMoney(a: number, b: number): number {
  return Math.round((a - b) * 100) / 100;
}
