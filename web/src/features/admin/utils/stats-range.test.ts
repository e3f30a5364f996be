import { describe, expect, it } from 'vitest';
import { isDay, presetRange, rangeProblem, shiftDay, todayIn } from './stats-range';

describe('stats ranges', () => {
  it('counts today in the zone given, not in UTC', () => {
    const lateEvening = new Date('2025-03-14T23:30:00Z');
    expect(todayIn('UTC', lateEvening)).toBe('2025-03-14');
    expect(todayIn('Europe/Budapest', lateEvening)).toBe('2025-03-15');
    expect(todayIn('America/New_York', new Date('2025-03-15T02:00:00Z'))).toBe('2025-03-14');
  });

  it('moves calendar days across months, years and leap days', () => {
    expect(shiftDay('2025-03-01', { days: -1 })).toBe('2025-02-28');
    expect(shiftDay('2024-03-01', { days: -1 })).toBe('2024-02-29');
    expect(shiftDay('2025-01-01', { days: -1 })).toBe('2024-12-31');
    expect(shiftDay('2024-02-29', { months: -12 })).toBe('2023-02-28');
    expect(shiftDay('2025-03-31', { months: -1 })).toBe('2025-02-28');
  });

  it('ends every preset today, with today counted in', () => {
    expect(presetRange('7d', '2025-03-14')).toEqual({ from: '2025-03-08', to: '2025-03-14' });
    expect(presetRange('30d', '2025-03-14')).toEqual({ from: '2025-02-13', to: '2025-03-14' });
    expect(presetRange('90d', '2025-03-14')).toEqual({ from: '2024-12-15', to: '2025-03-14' });
    expect(presetRange('12m', '2025-03-14')).toEqual({ from: '2024-03-15', to: '2025-03-14' });
    expect(presetRange('12m', '2024-02-29')).toEqual({ from: '2023-03-01', to: '2024-02-29' });
  });

  it('takes only real days written YYYY-MM-DD', () => {
    expect(isDay('2024-02-29')).toBe(true);
    expect(isDay('2025-02-29')).toBe(false);
    expect(isDay('2025-3-1')).toBe(false);
    expect(isDay('')).toBe(false);
    expect(isDay(null)).toBe(false);
  });

  it('finds what the server would refuse in a range', () => {
    expect(rangeProblem({ from: '2025-01-02', to: '2025-01-01' })).toBe('order');
    expect(rangeProblem({ from: '2025-01-01', to: '2025-01-01' })).toBeNull();
    expect(rangeProblem({ from: '2024-01-01', to: '2024-12-31' })).toBeNull();
    expect(rangeProblem({ from: '2023-12-31', to: '2024-12-31' })).toBe('tooLong');
  });
});
