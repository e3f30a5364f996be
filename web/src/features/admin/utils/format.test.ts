import { describe, expect, it } from 'vitest';
import { formatCalendarDay, formatCost } from './format';

describe('console formats', () => {
  it('shows a model cost under a euro with its first significant digits, and cents above', () => {
    expect(formatCost(0, 'en-US')).toBe('€0.00');
    expect(formatCost(0.3, 'en-US')).toBe('€0.30');
    expect(formatCost(0.0425, 'en-US')).toBe('€0.0425');
    expect(formatCost(0.0000026, 'en-US')).toBe('€0.0000026');
    expect(formatCost(0.99949, 'en-US')).toBe('€0.999');
    expect(formatCost(1.5925, 'en-US')).toBe('€1.59');
    expect(formatCost(0.0425, 'hu-HU').replace(/\s/g, ' ')).toBe('0,0425 EUR');
  });

  it('shows a stats day as that day, whatever the browser’s zone', () => {
    expect(formatCalendarDay('2025-03-14', 'en-US')).toBe('Mar 14, 2025');
    expect(formatCalendarDay('2025-03-14', 'en-US', 'short')).toBe('Mar 14');
    expect(formatCalendarDay('2025-03-14', 'hu-HU')).toBe('2025. márc. 14.');
  });
});
