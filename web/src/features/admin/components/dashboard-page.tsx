import { useEffect, useId, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { Spinner } from '@/components/spinner';
import { useDocumentTitle } from '@/hooks/use-document-title';
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
          onCustom={(range) => setParams(range)}
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
  onCustom: (range: { from: string; to: string }) => void;
}

/** A preset range, or two dates shown once "Custom dates" is picked (starting from the range shown). */
function RangePicker({ value, from, to, onPreset, onCustom }: RangePickerProps) {
  const { t } = useTranslation('admin');
  const ids = { range: useId(), from: useId(), to: useId() };
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
            else onCustom({ from, to });
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
      {value === 'custom' && (
        // Keyed by the range, so the inputs start again from what is shown after a change.
        <form
          key={`${from}/${to}`}
          className={own.custom}
          aria-label={t('dashboard.customLabel')}
          onSubmit={(event) => {
            event.preventDefault();
            const data = new FormData(event.currentTarget);
            const [first, last] = [data.get('from'), data.get('to')];
            if (typeof first === 'string' && typeof last === 'string' && isDay(first) && isDay(last)) onCustom({ from: first, to: last });
          }}
          data-testid="admin-dashboard-custom"
        >
          <div className={styles.field}>
            <label htmlFor={ids.from} className={styles.label}>
              {t('dashboard.from')}
            </label>
            <input id={ids.from} name="from" type="date" className={styles.input} defaultValue={from} required />
          </div>
          <div className={styles.field}>
            <label htmlFor={ids.to} className={styles.label}>
              {t('dashboard.to')}
            </label>
            <input id={ids.to} name="to" type="date" className={styles.input} defaultValue={to} required />
          </div>
          <Button type="submit" variant="secondary">
            {t('dashboard.apply')}
          </Button>
        </form>
      )}
    </div>
  );
}
