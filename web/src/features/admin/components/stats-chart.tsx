/**
 * A per-day line chart of the dashboard, drawn by uPlot (docs/operations.md "Dashboard":
 * ~50 KB, canvas, MIT). It is imported only from the console's lazy chunk, so no one but
 * an admin downloads it. The canvas is hidden from screen readers: the figure's caption
 * and summary say what it shows, and the per-day table beside the charts has each value.
 */
import { useEffect, useId, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import styles from './dashboard.module.css';

/** The theme colour a series is drawn in (a custom property of global.css). */
export type SeriesColor = 'primary' | 'positive' | 'danger' | 'warning' | 'muted';

export interface ChartSeries {
  label: string;
  values: number[];
  color: SeriesColor;
}

export interface StatsChartProps {
  /** The figure's caption, also the chart's accessible name. */
  title: string;
  /** The same figures in words (totals, peak), read instead of the canvas. */
  summary: string;
  /** The x axis: one label a day (short), and the same day in full for the legend, under `dayHeading`. */
  dayHeading: string;
  dayLabels: string[];
  dayNames: string[];
  series: ChartSeries[];
  /** Counts: the y axis steps by whole numbers (no "0.5 sign-ups"). */
  whole?: boolean;
  /** A value on the y axis (short) and in the legend. */
  formatTick: (value: number) => string;
  formatValue: (value: number) => string;
  testId: string;
}

const HEIGHT = 220;
/** Steps between labelled days: a day, a few, a week, a fortnight, about a month… */
const DAY_STEPS = [1, 2, 3, 7, 14, 30, 61, 91, 182, 365];
/** Steps of a count's axis: 1, 2, 5, 10, 20, 50… */
const WHOLE_STEPS = Array.from({ length: 30 }, (_, i) => [1, 2, 5][i % 3]! * 10 ** Math.floor(i / 3));

const cssColor = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';

/**
 * Changes each time the theme does (the settings' `data-theme`, or the system's scheme
 * for `auto`), so the canvas, which cannot follow CSS variables by itself, is redrawn.
 */
function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((n) => n + 1);
    const observer = new MutationObserver(bump);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    const scheme = window.matchMedia?.('(prefers-color-scheme: dark)');
    scheme?.addEventListener('change', bump);
    return () => {
      observer.disconnect();
      scheme?.removeEventListener('change', bump);
    };
  }, []);
  return version;
}

export function StatsChart({
  title,
  summary,
  dayHeading,
  dayLabels,
  dayNames,
  series,
  whole = false,
  formatTick,
  formatValue,
  testId,
}: StatsChartProps) {
  const holder = useRef<HTMLDivElement>(null);
  const ids = { title: useId(), summary: useId() };
  const theme = useThemeVersion();

  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const text = cssColor('--color-text-muted');
    const grid = cssColor('--color-border');
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const fewDays = dayLabels.length <= 31;
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height: HEIGHT,
      // The days are an index: their labels come from the server's dates, already in the
      // operator's zone, so uPlot's own time handling (the browser's zone) stays out.
      scales: { x: { time: false } },
      series: [
        { label: dayHeading, value: (_plot, index) => (index == null ? '' : (dayNames[index] ?? '')) },
        ...series.map((line) => {
          const colour = cssColor(`--color-${line.color === 'muted' ? 'text-muted' : line.color}`);
          return {
            label: line.label,
            stroke: colour,
            width: 2,
            points: { show: fewDays, size: 5, fill: colour },
            value: (_plot: uPlot, value: number | null) => (value == null ? '–' : formatValue(value)),
          };
        }),
      ],
      axes: [
        {
          ...axis,
          incrs: DAY_STEPS,
          space: 56,
          values: (_plot, splits) => splits.map((index) => (Number.isInteger(index) ? (dayLabels[index] ?? '') : '')),
        },
        {
          ...axis,
          // As wide as its longest label ("HUF 1.5K", "2,5 E Ft"), about 7 px a character.
          size: (_plot, values) => 16 + 7 * Math.max(3, ...(values ?? []).map((label) => label.length)),
          ...(whole ? { incrs: WHOLE_STEPS } : {}),
          values: (_plot, splits) => splits.map((value) => formatTick(value)),
        },
      ],
      // Counts and money are never below zero; a flat zero line sits at the bottom.
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
    };
    const data: uPlot.AlignedData = [dayLabels.map((_, index) => index), ...series.map((line) => line.values)];
    const plot = new uPlot(options, data, element);

    // The chart takes its box's width: a phone's 360 px as well as a wide screen.
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 200), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [dayHeading, dayLabels, dayNames, series, whole, formatTick, formatValue, theme]);

  return (
    <figure className={styles.chart} aria-labelledby={ids.title} aria-describedby={ids.summary} data-testid={testId}>
      <figcaption id={ids.title} className={styles.chartTitle}>
        {title}
      </figcaption>
      <p id={ids.summary} className="visually-hidden" data-testid={`${testId}-summary`}>
        {summary}
      </p>
      <div ref={holder} className={styles.chartCanvas} aria-hidden="true" />
    </figure>
  );
}
