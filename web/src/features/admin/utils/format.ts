/** Dates and money in the interface language, for the console's tables (the shared ones from `@/lib/format`). */
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
