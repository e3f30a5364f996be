import { useEffect, useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { Spinner } from '@/components/spinner';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { MAX_STATS_DAYS } from '@/types/generated';
import type { StatsQuery } from '../api/admin-api';
import { useStatsStore } from '../stores/stats-store';
import { formatCalendarDay, useLocale } from '../utils/format';
import {
  browserTimeZone,
  DEFAULT_PRESET,
  isDay,
  isPreset,
  presetRange,
  PRESETS,
  rangeProblem,
  todayIn,
  type Preset,
} from '../utils/stats-range';
import styles from './admin.module.css';
import { AdminNav } from './admin-nav';
import { DashboardFigures } from './dashboard-figures';
import own from './dashboard.module.css';

/**
 * `/admin`: the operator's figures for a range of days, cut in the browser's own zone.
 * The range lives in the address (`?range=7d`, or `?from=&to=` for custom dates), so it
 * survives a reload and Back, and can be shared.
 */
export function DashboardPage() {
  const { t } = useTranslation('admin');
  useDocumentTitle(t('dashboard.title'));
  const locale = useLocale();
  const [params, setParams] = useSearchParams();
  const { stats, status, error, load } = useStatsStore();

  const tz = useMemo(() => browserTimeZone(), []);
  const customFrom = params.get('from');
  const customTo = params.get('to');
  const custom = isDay(customFrom) && isDay(customTo);
  const rangeParam = params.get('range');
  const preset: Preset = isPreset(rangeParam) ? rangeParam : DEFAULT_PRESET;
  const { from, to } = custom ? { from: customFrom, to: customTo } : presetRange(preset, todayIn(tz));

  useEffect(() => {
    void load({ from, to, tz });
  }, [from, to, tz, load]);

  const retry = () => void load({ from, to, tz } satisfies StatsQuery);

  return (
    <div className={styles.page} data-testid="admin-dashboard">
      <AdminNav />
      <div className={own.header}>
        <h1>{t('dashboard.title')}</h1>
        <RangePicker
          value={custom ? 'custom' : preset}
          from={from}
          to={to}
          onPreset={(next) => setParams(next === DEFAULT_PRESET ? {} : { range: next })}
          onCustom={(range, replace) => setParams(range, { replace })}
        />
      </div>
      <p className={styles.muted} data-testid="admin-dashboard-range">
        {t('dashboard.rangeNote', {
          from: formatCalendarDay(from, locale),
          to: formatCalendarDay(to, locale),
          zone: tz,
        })}
      </p>

      {status === 'error' && (
        <div className={own.errorBox} data-testid="admin-dashboard-error">
          <FormAlert>{error ?? t('dashboard.loadError')}</FormAlert>
          <Button variant="secondary" onClick={retry}>
            {t('dashboard.retry')}
          </Button>
        </div>
      )}
      {status === 'loading' && !stats && <Spinner label={t('dashboard.loading')} />}
      {stats && status !== 'error' && <DashboardFigures stats={stats} />}
    </div>
  );
}

interface RangePickerProps {
  value: Preset | 'custom';
  from: string;
  to: string;
  onPreset: (preset: Preset) => void;
  /** `replace`: the same range, now as dates, takes the place of the preset in the history. */
  onCustom: (range: { from: string; to: string }, replace?: boolean) => void;
}

/** A preset range, or two dates shown once "Custom dates" is picked (starting from the range shown). */
function RangePicker({ value, from, to, onPreset, onCustom }: RangePickerProps) {
  const { t } = useTranslation('admin');
  const ids = { range: useId() };
  return (
    <div className={own.picker}>
      <div className={styles.field}>
        <label htmlFor={ids.range} className={styles.label}>
          {t('dashboard.range')}
        </label>
        <select
          id={ids.range}
          className={styles.select}
          value={value}
          onChange={(event) => {
            const next = event.target.value;
            if (isPreset(next)) onPreset(next);
            else onCustom({ from, to }, true);
          }}
          data-testid="admin-dashboard-range-select"
        >
          {PRESETS.map((preset) => (
            <option key={preset} value={preset}>
              {t(`dashboard.ranges.${preset}`)}
            </option>
          ))}
          <option value="custom">{t('dashboard.ranges.custom')}</option>
        </select>
      </div>
      {value === 'custom' && <CustomRange key={`${from}/${to}`} from={from} to={to} onCustom={onCustom} />}
    </div>
  );
}

/**
 * Two dates and "Show". A range the server would refuse (the end before the start, more
 * than a year) is refused here with the reason, and nothing is asked. Keyed by the range
 * shown, so the inputs start again from it after a change.
 */
function CustomRange({ from, to, onCustom }: { from: string; to: string; onCustom: (range: { from: string; to: string }) => void }) {
  const { t } = useTranslation('admin');
  const ids = { from: useId(), to: useId(), problem: useId() };
  const [problem, setProblem] = useState<'order' | 'tooLong' | null>(null);
  const invalid = problem ? { 'aria-invalid': true, 'aria-describedby': ids.problem } : {};
  return (
    <form
      className={own.custom}
      aria-label={t('dashboard.customLabel')}
      onSubmit={(event) => {
        event.preventDefault();
        const data = new FormData(event.currentTarget);
        const [first, last] = [data.get('from'), data.get('to')];
        if (typeof first !== 'string' || typeof last !== 'string' || !isDay(first) || !isDay(last)) return;
        const range = { from: first, to: last };
        const found = rangeProblem(range);
        setProblem(found);
        if (!found) onCustom(range);
      }}
      data-testid="admin-dashboard-custom"
    >
      <div className={styles.field}>
        <label htmlFor={ids.from} className={styles.label}>
          {t('dashboard.from')}
        </label>
        <input id={ids.from} name="from" type="date" className={styles.input} defaultValue={from} required {...invalid} />
      </div>
      <div className={styles.field}>
        <label htmlFor={ids.to} className={styles.label}>
          {t('dashboard.to')}
        </label>
        <input id={ids.to} name="to" type="date" className={styles.input} defaultValue={to} required {...invalid} />
      </div>
      <Button type="submit" variant="secondary">
        {t('dashboard.apply')}
      </Button>
      {problem && (
        <p id={ids.problem} role="alert" className={[styles.error, own.problem].join(' ')} data-testid="admin-dashboard-range-problem">
          {t(`dashboard.rangeErrors.${problem}`, { max: MAX_STATS_DAYS })}
        </p>
      )}
    </form>
  );
}
