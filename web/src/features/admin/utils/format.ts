/** Dates and money in the interface language, for the console's tables (the shared ones from `@/lib/format`). */
import type { Currency } from '@/types/generated';

export { useLocale } from '@/hooks/use-locale';
export { formatDateTime, formatMoney, formatNumber } from '@/lib/format';

export function formatDay(iso: string, locale: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium' }).format(date);
}

/** Money in major units without float drift: 12.7 - 5.1 is 7.6, not 7.599999999999999. */
export function subtractMoney(a: number, b: number): number {
  return Math.round((a - b) * 100) / 100;
}

/**
 * A calendar day of the stats (YYYY-MM-DD, already in the operator's zone): formatted as
 * that day wherever the browser is, so it is read at UTC midnight and shown in UTC.
 * `short` is the charts' axis ("Mar 14"), `medium` the tables' ("Mar 14, 2025").
 */
export function formatCalendarDay(day: string, locale: string, style: 'short' | 'medium' = 'medium'): string {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return day;
  const options: Intl.DateTimeFormatOptions =
    style === 'short' ? { month: 'short', day: 'numeric', timeZone: 'UTC' } : { dateStyle: 'medium', timeZone: 'UTC' };
  return new Intl.DateTimeFormat(locale, options).format(date);
}

/**
 * Model cost in euros: one call costs a fraction of a cent (€0.0000026), which two
 * decimals would show as €0.00, so an amount under one euro keeps its first three
 * significant digits ("€0.0425", "€0.30"); a euro or more shows cents.
 */
export function formatCost(amount: number, locale: string): string {
  const size = Math.abs(amount);
  const digits = size > 0 && size < 1 ? Math.min(12, Math.max(2, 2 - Math.floor(Math.log10(size)))) : 2;
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: 'EUR',
    minimumFractionDigits: 2,
    maximumFractionDigits: digits,
  }).format(amount);
}

/** A chart axis's short figure: "1.2K", "€3.5K", "12 E Ft". */
export function formatCompact(value: number, locale: string, currency?: Currency): string {
  return new Intl.NumberFormat(locale, {
    notation: 'compact',
    maximumFractionDigits: Math.abs(value) < 10 ? 2 : 1,
    ...(currency ? { style: 'currency', currency } : {}),
  }).format(value);
}
