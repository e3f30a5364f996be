/**
 * The dashboard's body for one answer of `GET /api/admin/stats`: the key figures, the
 * charts per day (with the same figures as a table for screen readers), and the tables by
 * model, by plan, of the costliest users and of the subscriptions active now. What each
 * figure means is defined by the contract's doc comments (contract/src/admin.rs).
 */
import { useCallback, useId, useMemo, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { AdminStats, Amounts, Currency, StatsDay } from '@/types/generated';
import { formatCalendarDay, formatCompact, formatCost, formatMoney, formatNumber, useLocale } from '../utils/format';
import styles from './admin.module.css';
import own from './dashboard.module.css';
import { StatsChart, type ChartSeries } from './stats-chart';

/** The range's sums of the per-day figures. */
interface Totals {
  signUps: number;
  messages: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
  newSubscriptions: number;
  cancelled: number;
  failedRenewals: number;
  revenue: Amounts;
  refunds: Amounts;
}

function sumDays(days: StatsDay[]): Totals {
  const totals: Totals = {
    signUps: 0,
    messages: 0,
    inputTokens: 0,
    outputTokens: 0,
    cost: 0,
    newSubscriptions: 0,
    cancelled: 0,
    failedRenewals: 0,
    revenue: { eur: 0, huf: 0 },
    refunds: { eur: 0, huf: 0 },
  };
  for (const day of days) {
    totals.signUps += day.signUps;
    totals.messages += day.messages;
    totals.inputTokens += day.inputTokens;
    totals.outputTokens += day.outputTokens;
    totals.cost += day.cost;
    totals.newSubscriptions += day.newSubscriptions;
    totals.cancelled += day.cancelled;
    totals.failedRenewals += day.failedRenewals;
    totals.revenue.eur += day.revenue.eur;
    totals.revenue.huf += day.revenue.huf;
    totals.refunds.eur += day.refunds.eur;
    totals.refunds.huf += day.refunds.huf;
  }
  // Money is summed in cents so 0.1 + 0.2 shows as 0.30, not 0.30000000000000004.
  const cents = (value: number) => Math.round(value * 100) / 100;
  totals.revenue = { eur: cents(totals.revenue.eur), huf: cents(totals.revenue.huf) };
  totals.refunds = { eur: cents(totals.refunds.eur), huf: cents(totals.refunds.huf) };
  return totals;
}

/** Whether anything happened in the range (the subscriptions and MRR are "now", not the range's). */
function hasActivity(stats: AdminStats): boolean {
  return (
    stats.byModel.length > 0 ||
    stats.byPlan.length > 0 ||
    stats.topUsers.length > 0 ||
    stats.days.some(
      (day) =>
        day.signUps ||
        day.activeUsers ||
        day.messages ||
        day.inputTokens ||
        day.outputTokens ||
        day.cost ||
        day.newSubscriptions ||
        day.cancelled ||
        day.failedRenewals ||
        day.revenue.eur ||
        day.revenue.huf ||
        day.refunds.eur ||
        day.refunds.huf,
    )
  );
}

export function DashboardFigures({ stats }: { stats: AdminStats }) {
  const { t } = useTranslation('admin');
  const totals = useMemo(() => sumDays(stats.days), [stats.days]);
  const active = hasActivity(stats);
  return (
    <>
      <KeyFigures stats={stats} totals={totals} />
      {active ? (
        <>
          <Charts days={stats.days} />
          <PerDayTable days={stats.days} />
          <ModelTable stats={stats} />
          <PlanTable stats={stats} />
          <TopUsersTable stats={stats} />
        </>
      ) : (
        <p className={[styles.muted, own.empty].join(' ')} data-testid="admin-dashboard-empty">
          {t('dashboard.empty')}
        </p>
      )}
      <SubscriptionsTable stats={stats} />
    </>
  );
}

/** Both currencies, one a line: they are never added together. */
function Money({ amounts }: { amounts: Amounts }) {
  const locale = useLocale();
  return (
    <>
      <span className={own.line}>{formatMoney(amounts.eur, 'EUR', locale)}</span>
      <span className={own.line}>{formatMoney(amounts.huf, 'HUF', locale)}</span>
    </>
  );
}

function Figure({ name, label, children }: { name: string; label: string; children: ReactNode }) {
  return (
    <div className={own.figure} data-testid={`admin-figure-${name}`}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function KeyFigures({ stats, totals }: { stats: AdminStats; totals: Totals }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const n = (value: number) => formatNumber(value, locale);
  return (
    <dl className={own.figures} aria-label={t('dashboard.figures.label')}>
      <Figure name="signUps" label={t('dashboard.figures.signUps')}>
        {n(totals.signUps)}
      </Figure>
      <Figure name="activeUsers" label={t('dashboard.figures.activeUsers')}>
        <span className={own.line}>
          {n(stats.activeUsers.daily)} <small>{t('dashboard.figures.daily')}</small>
        </span>
        <span className={own.line}>
          {n(stats.activeUsers.weekly)} <small>{t('dashboard.figures.weekly')}</small>
        </span>
        <span className={own.line}>
          {n(stats.activeUsers.monthly)} <small>{t('dashboard.figures.monthly')}</small>
        </span>
      </Figure>
      <Figure name="messages" label={t('dashboard.figures.messages')}>
        {n(totals.messages)}
      </Figure>
      <Figure name="tokens" label={t('dashboard.figures.tokens')}>
        <span className={own.line}>{t('dashboard.figures.tokensIn', { count: n(totals.inputTokens) })}</span>
        <span className={own.line}>{t('dashboard.figures.tokensOut', { count: n(totals.outputTokens) })}</span>
      </Figure>
      <Figure name="cost" label={t('dashboard.figures.cost')}>
        {formatCost(totals.cost, locale)}
      </Figure>
      <Figure name="mrr" label={t('dashboard.figures.mrr')}>
        <Money amounts={stats.mrr} />
      </Figure>
      <Figure name="revenue" label={t('dashboard.figures.revenue')}>
        <Money amounts={totals.revenue} />
      </Figure>
      <Figure name="refunds" label={t('dashboard.figures.refunds')}>
        <Money amounts={totals.refunds} />
      </Figure>
      <Figure name="newSubscriptions" label={t('dashboard.figures.newSubscriptions')}>
        {n(totals.newSubscriptions)}
      </Figure>
      <Figure name="cancelled" label={t('dashboard.figures.cancelled')}>
        {n(totals.cancelled)}
      </Figure>
      <Figure name="failedRenewals" label={t('dashboard.figures.failedRenewals')}>
        {n(totals.failedRenewals)}
      </Figure>
    </dl>
  );
}

/** "Messages: 120 in total, most on Mar 14 (40)." for a chart's screen-reader summary. */
function useDescribe() {
  const { t } = useTranslation('admin');
  return (names: string[], series: ChartSeries[], format: (value: number) => string, withTotal: boolean) =>
    series
      .map(({ label, values }) => {
        let peak = 0;
        values.forEach((value, index) => {
          if (value > (values[peak] ?? 0)) peak = index;
        });
        const most = values[peak] ?? 0;
        if (most <= 0) return t('dashboard.charts.summaryNone', { label });
        const total = values.reduce((sum, value) => sum + value, 0);
        const args = { label, peak: format(most), day: names[peak] ?? '', total: format(total) };
        return withTotal ? t('dashboard.charts.summary', args) : t('dashboard.charts.summaryPeak', args);
      })
      .join(' ');
}

function Charts({ days }: { days: StatsDay[] }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const describe = useDescribe();
  const dayLabels = useMemo(() => days.map((day) => formatCalendarDay(day.date, locale, 'short')), [days, locale]);
  const dayNames = useMemo(() => days.map((day) => formatCalendarDay(day.date, locale)), [days, locale]);
  const count = useCallback((value: number) => formatNumber(value, locale), [locale]);
  const countTick = useCallback((value: number) => formatCompact(value, locale), [locale]);
  const cost = useCallback((value: number) => formatCost(value, locale), [locale]);
  // A small service's day may cost a fraction of a cent: those ticks keep their digits.
  const costTick = useCallback(
    (value: number) => (Math.abs(value) < 1 ? formatCost(value, locale) : formatCompact(value, locale, 'EUR')),
    [locale],
  );
  const eur = useMoneyFormats('EUR');
  const huf = useMoneyFormats('HUF');

  const series = useMemo(() => {
    const money = (currency: 'eur' | 'huf'): ChartSeries[] => [
      { label: t('dashboard.charts.series.revenue'), values: days.map((day) => day.revenue[currency]), color: 'positive' },
      { label: t('dashboard.charts.series.refunds'), values: days.map((day) => day.refunds[currency]), color: 'danger' },
    ];
    return {
      activity: [
        { label: t('dashboard.charts.series.messages'), values: days.map((day) => day.messages), color: 'primary' },
        { label: t('dashboard.charts.series.activeUsers'), values: days.map((day) => day.activeUsers), color: 'warning' },
      ] satisfies ChartSeries[],
      cost: [{ label: t('dashboard.charts.series.cost'), values: days.map((day) => day.cost), color: 'primary' }] satisfies ChartSeries[],
      eur: money('eur'),
      huf: money('huf'),
      subscriptions: [
        { label: t('dashboard.charts.series.new'), values: days.map((day) => day.newSubscriptions), color: 'positive' },
        { label: t('dashboard.charts.series.cancelled'), values: days.map((day) => day.cancelled), color: 'warning' },
        { label: t('dashboard.charts.series.failed'), values: days.map((day) => day.failedRenewals), color: 'danger' },
      ] satisfies ChartSeries[],
    };
  }, [days, t]);

  const anyMoney = (currency: 'eur' | 'huf') => days.some((day) => day.revenue[currency] || day.refunds[currency]);
  // Forints are charted only when there were some; euros when there were, or when neither was.
  const showHuf = anyMoney('huf');
  const showEur = anyMoney('eur') || !showHuf;
  const common = { dayHeading: t('dashboard.perDay.columns.date'), dayLabels, dayNames };

  return (
    <div className={own.charts}>
      <StatsChart
        {...common}
        testId="admin-chart-activity"
        title={t('dashboard.charts.activity')}
        whole
        series={series.activity}
        formatTick={countTick}
        formatValue={count}
        summary={[
          describe(dayNames, series.activity.slice(0, 1), count, true),
          describe(dayNames, series.activity.slice(1), count, false),
        ].join(' ')}
      />
      <StatsChart
        {...common}
        testId="admin-chart-cost"
        title={t('dashboard.charts.cost')}
        series={series.cost}
        formatTick={costTick}
        formatValue={cost}
        summary={describe(dayNames, series.cost, cost, true)}
      />
      {showEur && (
        <StatsChart
          {...common}
          testId="admin-chart-revenue-eur"
          title={t('dashboard.charts.revenueEUR')}
          series={series.eur}
          formatTick={eur.tick}
          formatValue={eur.value}
          summary={describe(dayNames, series.eur, eur.value, true)}
        />
      )}
      {showHuf && (
        <StatsChart
          {...common}
          testId="admin-chart-revenue-huf"
          title={t('dashboard.charts.revenueHUF')}
          series={series.huf}
          formatTick={huf.tick}
          formatValue={huf.value}
          summary={describe(dayNames, series.huf, huf.value, true)}
        />
      )}
      <StatsChart
        {...common}
        testId="admin-chart-subscriptions"
        title={t('dashboard.charts.subscriptions')}
        whole
        series={series.subscriptions}
        formatTick={countTick}
        formatValue={count}
        summary={describe(dayNames, series.subscriptions, count, true)}
      />
    </div>
  );
}

function useMoneyFormats(currency: Currency) {
  const locale = useLocale();
  const value = useCallback((amount: number) => formatMoney(amount, currency, locale), [currency, locale]);
  const tick = useCallback((amount: number) => formatCompact(amount, locale, currency), [currency, locale]);
  return useMemo(() => ({ value, tick }), [value, tick]);
}

interface Column<Row> {
  key: string;
  label: string;
  numeric?: boolean;
  cell: (row: Row) => ReactNode;
}

/** A titled table of the dashboard; on a phone each row is a card (the console's `stack`). */
function FigureTable<Row>({
  title,
  rows,
  columns,
  rowKey,
  testId,
  empty,
}: {
  title: string;
  rows: Row[];
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
  testId: string;
  empty?: string;
}) {
  const { t } = useTranslation('admin');
  const heading = useId();
  const [first, ...rest] = columns;
  return (
    <section className={styles.card} aria-labelledby={heading} data-testid={testId}>
      <h2 id={heading} className={own.tableTitle}>
        {title}
      </h2>
      {rows.length === 0 ? (
        <p className={styles.muted}>{empty ?? t('dashboard.none')}</p>
      ) : (
        <div className={own.tableScroll}>
          <table className={[styles.table, styles.stack].join(' ')} aria-labelledby={heading}>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th key={column.key} scope="col" className={column.numeric ? styles.number : undefined}>
                    {column.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={rowKey(row)} data-testid={`${testId}-row`}>
                  {first && (
                    <th scope="row" className={styles.primaryCell}>
                      {first.cell(row)}
                    </th>
                  )}
                  {rest.map((column) => (
                    <td key={column.key} data-label={column.label} className={column.numeric ? styles.number : undefined}>
                      {/* One child per cell: on a phone the cell is a flex row of label and value. */}
                      <span>{column.cell(row)}</span>
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function PerDayTable({ days }: { days: StatsDay[] }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const n = (value: number) => formatNumber(value, locale);
  const columns: Column<StatsDay>[] = [
    { key: 'date', label: t('dashboard.perDay.columns.date'), cell: (day) => <time dateTime={day.date}>{formatCalendarDay(day.date, locale)}</time> },
    { key: 'signUps', label: t('dashboard.perDay.columns.signUps'), numeric: true, cell: (day) => n(day.signUps) },
    { key: 'activeUsers', label: t('dashboard.perDay.columns.activeUsers'), numeric: true, cell: (day) => n(day.activeUsers) },
    { key: 'messages', label: t('dashboard.perDay.columns.messages'), numeric: true, cell: (day) => n(day.messages) },
    { key: 'tokensIn', label: t('dashboard.perDay.columns.tokensIn'), numeric: true, cell: (day) => n(day.inputTokens) },
    { key: 'tokensOut', label: t('dashboard.perDay.columns.tokensOut'), numeric: true, cell: (day) => n(day.outputTokens) },
    { key: 'cost', label: t('dashboard.perDay.columns.cost'), numeric: true, cell: (day) => formatCost(day.cost, locale) },
    { key: 'new', label: t('dashboard.perDay.columns.new'), numeric: true, cell: (day) => n(day.newSubscriptions) },
    { key: 'cancelled', label: t('dashboard.perDay.columns.cancelled'), numeric: true, cell: (day) => n(day.cancelled) },
    { key: 'failed', label: t('dashboard.perDay.columns.failed'), numeric: true, cell: (day) => n(day.failedRenewals) },
    { key: 'revenue', label: t('dashboard.perDay.columns.revenue'), numeric: true, cell: (day) => <Money amounts={day.revenue} /> },
    { key: 'refunds', label: t('dashboard.perDay.columns.refunds'), numeric: true, cell: (day) => <Money amounts={day.refunds} /> },
  ];
  // Newest first: the day an operator most often looks for is today.
  const rows = useMemo(() => [...days].reverse(), [days]);
  return (
    <details className={own.perDay} data-testid="admin-dashboard-per-day">
      <summary>{t('dashboard.perDay.title')}</summary>
      <FigureTable title={t('dashboard.perDay.title')} rows={rows} columns={columns} rowKey={(day) => day.date} testId="admin-per-day" />
    </details>
  );
}

function ModelTable({ stats }: { stats: AdminStats }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const n = (value: number) => formatNumber(value, locale);
  return (
    <FigureTable
      title={t('dashboard.byModel.title')}
      testId="admin-by-model"
      rows={stats.byModel}
      rowKey={(row) => row.model}
      columns={[
        { key: 'model', label: t('dashboard.byModel.columns.model'), cell: (row) => row.model },
        { key: 'messages', label: t('dashboard.byModel.columns.messages'), numeric: true, cell: (row) => n(row.messages) },
        { key: 'calls', label: t('dashboard.byModel.columns.calls'), numeric: true, cell: (row) => n(row.calls) },
        { key: 'tokensIn', label: t('dashboard.byModel.columns.tokensIn'), numeric: true, cell: (row) => n(row.inputTokens) },
        { key: 'tokensOut', label: t('dashboard.byModel.columns.tokensOut'), numeric: true, cell: (row) => n(row.outputTokens) },
        { key: 'images', label: t('dashboard.byModel.columns.images'), numeric: true, cell: (row) => n(row.images) },
        { key: 'cost', label: t('dashboard.byModel.columns.cost'), numeric: true, cell: (row) => formatCost(row.cost, locale) },
      ]}
    />
  );
}

function PlanTable({ stats }: { stats: AdminStats }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const n = (value: number) => formatNumber(value, locale);
  return (
    <FigureTable
      title={t('dashboard.byPlan.title')}
      testId="admin-by-plan"
      rows={stats.byPlan}
      rowKey={(row) => row.planType}
      columns={[
        { key: 'plan', label: t('dashboard.byPlan.columns.plan'), cell: (row) => t(`plans.${row.planType}`) },
        { key: 'messages', label: t('dashboard.byPlan.columns.messages'), numeric: true, cell: (row) => n(row.messages) },
        {
          key: 'tokens',
          label: t('dashboard.byPlan.columns.tokens'),
          numeric: true,
          cell: (row) => (
            <>
              <span className={own.line}>{t('dashboard.figures.tokensIn', { count: n(row.inputTokens) })}</span>
              <span className={own.line}>{t('dashboard.figures.tokensOut', { count: n(row.outputTokens) })}</span>
            </>
          ),
        },
        { key: 'cost', label: t('dashboard.byPlan.columns.cost'), numeric: true, cell: (row) => formatCost(row.cost, locale) },
        { key: 'revenue', label: t('dashboard.byPlan.columns.revenue'), numeric: true, cell: (row) => <Money amounts={row.revenue} /> },
        { key: 'margin', label: t('dashboard.byPlan.columns.margin'), numeric: true, cell: (row) => formatCost(row.grossMargin, locale) },
      ]}
    />
  );
}

function TopUsersTable({ stats }: { stats: AdminStats }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const n = (value: number) => formatNumber(value, locale);
  return (
    <FigureTable
      title={t('dashboard.topUsers.title')}
      testId="admin-top-users"
      rows={stats.topUsers}
      // Deleted accounts have no id; their place in the list tells them apart.
      rowKey={(row) => row._id ?? `deleted:${stats.topUsers.indexOf(row)}`}
      columns={[
        {
          key: 'user',
          label: t('dashboard.topUsers.columns.user'),
          cell: (row) =>
            row._id ? (
              <Link to={`/admin/users/${encodeURIComponent(row._id)}`} className={styles.breakAnywhere} data-testid="admin-top-user-link">
                {row.email ?? row._id}
              </Link>
            ) : (
              <span className={styles.badge} data-status="deleted">
                {t('dashboard.topUsers.deleted')}
              </span>
            ),
        },
        { key: 'plan', label: t('dashboard.topUsers.columns.plan'), cell: (row) => t(`plans.${row.planType}`) },
        { key: 'messages', label: t('dashboard.topUsers.columns.messages'), numeric: true, cell: (row) => n(row.messages) },
        { key: 'tokens', label: t('dashboard.topUsers.columns.tokens'), numeric: true, cell: (row) => n(row.tokens) },
        { key: 'cost', label: t('dashboard.topUsers.columns.cost'), numeric: true, cell: (row) => formatCost(row.cost, locale) },
      ]}
    />
  );
}

function SubscriptionsTable({ stats }: { stats: AdminStats }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  return (
    <FigureTable
      title={t('dashboard.subscriptions.title')}
      testId="admin-subscriptions"
      rows={stats.subscriptions}
      rowKey={(row) => `${row.planType}/${row.billingCycle}`}
      empty={t('dashboard.subscriptions.none')}
      columns={[
        { key: 'plan', label: t('dashboard.subscriptions.columns.plan'), cell: (row) => t(`plans.${row.planType}`) },
        { key: 'cycle', label: t('dashboard.subscriptions.columns.cycle'), cell: (row) => t(`dashboard.cycles.${row.billingCycle}`) },
        { key: 'count', label: t('dashboard.subscriptions.columns.count'), numeric: true, cell: (row) => formatNumber(row.count, locale) },
      ]}
    />
  );
}
