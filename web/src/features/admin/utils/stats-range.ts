/**
 * The dashboard's ranges as calendar days in the operator's own zone: the server cuts the
 * days in the zone it is sent (`tz`), so "today" must be today there, not in UTC.
 */
import { MAX_STATS_DAYS } from '@/types/generated';

/** The ranges the picker offers, and `custom` for two dates of the operator's choice. */
export const PRESETS = ['7d', '30d', '90d', '12m'] as const;
export type Preset = (typeof PRESETS)[number];
export const DEFAULT_PRESET: Preset = '30d';

export interface DayRange {
  /** YYYY-MM-DD, both included. */
  from: string;
  to: string;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The browser's IANA zone; UTC where the browser names none. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Whether `value` is a real calendar day written YYYY-MM-DD. */
export function isDay(value: string | null | undefined): value is string {
  const match = value ? DAY.exec(value) : null;
  if (!match) return false;
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** Today's date in `timeZone`. */
export function todayIn(timeZone: string, now: Date = new Date()): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(now);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** A calendar day moved by whole days and months (day arithmetic in UTC, free of DST). */
export function shiftDay(day: string, { days = 0, months = 0 }: { days?: number; months?: number }): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  // Months first, clamped to the target month's last day (a year before 29 Feb is 28 Feb).
  const lastOfMonth = new Date(Date.UTC(y, m - 1 + months + 1, 0)).getUTCDate();
  const date = new Date(Date.UTC(y, m - 1 + months, Math.min(d, lastOfMonth) + days));
  return date.toISOString().slice(0, 10);
}

/** The days a preset covers, ending today: "last 7 days" is today and the 6 before it. */
export function presetRange(preset: Preset, today: string): DayRange {
  switch (preset) {
    case '7d':
      return { from: shiftDay(today, { days: -6 }), to: today };
    case '30d':
      return { from: shiftDay(today, { days: -29 }), to: today };
    case '90d':
      return { from: shiftDay(today, { days: -89 }), to: today };
    case '12m':
      return { from: shiftDay(today, { months: -12, days: 1 }), to: today };
  }
}

export function isPreset(value: string | null): value is Preset {
  return (PRESETS as readonly (string | null)[]).includes(value);
}

/** What is wrong with a range of custom dates, if anything: the server would refuse it. */
export function rangeProblem({ from, to }: DayRange): 'order' | 'tooLong' | null {
  if (to < from) return 'order';
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
  return days > MAX_STATS_DAYS ? 'tooLong' : null;
}
