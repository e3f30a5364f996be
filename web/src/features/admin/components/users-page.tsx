import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { Spinner } from '@/components/spinner';
import { useDocumentTitle } from '@/hooks/use-document-title';
import type { AccountStatus, AdminUserRow, PlanType, ServiceCounts } from '@/types/generated';
import { PLANS, type UserFilters } from '../api/admin-api';
import { useAdminUsersStore } from '../stores/admin-stores';
import { formatDateTime, formatDay, formatNumber, useLocale } from '../utils/format';
import styles from './admin.module.css';
import { AdminNav } from './admin-nav';

/** How long typing pauses before the search runs. */
export const SEARCH_DEBOUNCE_MS = 300;
const STATUSES: readonly AccountStatus[] = ['active', 'suspended', 'unverified', 'deleted'];

/** `/admin/users`: every account, searchable by e-mail or name prefix, filtered by plan and state. */
export function UsersPage() {
  const { t } = useTranslation('admin');
  useDocumentTitle(t('users.title'));
  const { filters, rows, nextCursor, status, loadingMore, error, search, loadMore } = useAdminUsersStore();
  const [query, setQuery] = useState(filters.q);
  const ids = { q: useId(), plan: useId(), status: useId(), heading: useId() };

  // Every visit reads the list afresh (an action on a user changes their row), with the
  // filters the admin left: coming back from a user keeps the search.
  useEffect(() => {
    const store = useAdminUsersStore.getState();
    void store.search(store.filters);
  }, []);

  // Typing searches once it pauses; the filters below search at once.
  useEffect(() => {
    if (query === useAdminUsersStore.getState().filters.q) return;
    const timer = setTimeout(() => {
      const store = useAdminUsersStore.getState();
      // A filter changed meanwhile searched with this text already.
      if (store.filters.q === query) return;
      void store.search({ ...store.filters, q: query });
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [query]);

  const change = (next: Partial<UserFilters>) => void search({ ...filters, q: query, ...next });

  return (
    <div className={styles.page}>
      <AdminNav />
      <h1 id={ids.heading}>{t('users.title')}</h1>
      <form role="search" className={styles.filters} onSubmit={(event) => event.preventDefault()} aria-label={t('users.searchLabel')}>
        <div className={[styles.field, styles.grow].join(' ')}>
          <label htmlFor={ids.q} className={styles.label}>
            {t('users.search')}
          </label>
          <input
            id={ids.q}
            type="search"
            className={styles.input}
            value={query}
            placeholder={t('users.searchPlaceholder')}
            onChange={(event) => setQuery(event.target.value)}
            data-testid="admin-users-search"
          />
        </div>
        <div className={styles.field}>
          <label htmlFor={ids.plan} className={styles.label}>
            {t('users.plan')}
          </label>
          <select
            id={ids.plan}
            className={styles.select}
            value={filters.plan}
            onChange={(event) => change({ plan: event.target.value as PlanType | '' })}
            data-testid="admin-users-plan"
          >
            <option value="">{t('users.anyPlan')}</option>
            {PLANS.map((plan) => (
              <option key={plan} value={plan}>
                {t(`plans.${plan}`)}
              </option>
            ))}
          </select>
        </div>
        <div className={styles.field}>
          <label htmlFor={ids.status} className={styles.label}>
            {t('users.status')}
          </label>
          <select
            id={ids.status}
            className={styles.select}
            value={filters.status}
            onChange={(event) => change({ status: event.target.value as AccountStatus | '' })}
            data-testid="admin-users-status"
          >
            <option value="">{t('users.defaultStatus')}</option>
            {STATUSES.map((value) => (
              <option key={value} value={value}>
                {t(`status.${value}`)}
              </option>
            ))}
          </select>
        </div>
      </form>

      <FormAlert>{error}</FormAlert>
      {status === 'loading' && <Spinner label={t('users.loading')} />}
      {status === 'ready' && rows.length === 0 && (
        <p className={styles.muted} data-testid="admin-users-empty">
          {t('users.empty')}
        </p>
      )}
      {rows.length > 0 && status !== 'loading' && <UsersTable rows={rows} labelledBy={ids.heading} />}
      {nextCursor && status === 'ready' && (
        <div className={styles.more}>
          <Button variant="secondary" loading={loadingMore} onClick={() => void loadMore()} data-testid="admin-users-more">
            {t('list.more')}
          </Button>
        </div>
      )}
    </div>
  );
}

function Counts({ counts }: { counts: ServiceCounts }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  return (
    <span className={styles.counts}>
      {t('users.counts', {
        responses: formatNumber(counts.responses, locale),
        searches: formatNumber(counts.webSearches, locale),
        images: formatNumber(counts.imageGenerations, locale),
      })}
    </span>
  );
}

/** A table on wide screens; on a phone each row is a card of label–value lines (CSS only). */
function UsersTable({ rows, labelledBy }: { rows: AdminUserRow[]; labelledBy: string }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const navigate = useNavigate();
  return (
    <table className={[styles.table, styles.stack].join(' ')} aria-labelledby={labelledBy} data-testid="admin-users-table">
      <thead>
        <tr>
          <th scope="col">{t('users.columns.email')}</th>
          <th scope="col">{t('users.columns.name')}</th>
          <th scope="col">{t('users.columns.created')}</th>
          <th scope="col">{t('users.columns.lastActive')}</th>
          <th scope="col">{t('users.columns.plan')}</th>
          <th scope="col">{t('users.columns.today')}</th>
          <th scope="col">{t('users.columns.month')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const id = row._id;
          const to = id ? `/admin/users/${encodeURIComponent(id)}` : null;
          return (
            <tr
              key={id ?? `unverified:${row.email}`}
              className={to ? styles.clickable : undefined}
              // The e-mail is the row's link for keyboards and screen readers; a click
              // anywhere else on the row goes to the same place.
              onClick={(event) => {
                if (!to || (event.target as HTMLElement).closest('a')) return;
                void navigate(to);
              }}
              data-testid="admin-user-row"
              data-email={row.email}
            >
              <td data-label={t('users.columns.email')} className={styles.primaryCell}>
                {to ? (
                  <Link to={to} data-testid="admin-user-link">
                    {row.email}
                  </Link>
                ) : (
                  <span>{row.email}</span>
                )}
                {row.status !== 'active' && (
                  <span className={styles.badge} data-status={row.status}>
                    {t(`status.${row.status}`)}
                  </span>
                )}
                {row.role === 'admin' && <span className={styles.badge}>{t('roles.admin')}</span>}
              </td>
              <td data-label={t('users.columns.name')}>{row.name || '—'}</td>
              <td data-label={t('users.columns.created')}>
                <time dateTime={row.createdAt}>{formatDay(row.createdAt, locale)}</time>
              </td>
              <td data-label={t('users.columns.lastActive')}>
                {row.lastActiveAt ? (
                  <time dateTime={row.lastActiveAt}>{formatDateTime(row.lastActiveAt, locale)}</time>
                ) : (
                  t('users.never')
                )}
              </td>
              {/* One child per cell: on a phone the cell is a flex row of label and value. */}
              <td data-label={t('users.columns.plan')}>
                <span>
                  {t(`plans.${row.planType}`)}
                  {row.planEndDate && (
                    <span className={styles.subline}>{t('users.until', { date: formatDay(row.planEndDate, locale) })}</span>
                  )}
                </span>
              </td>
              <td data-label={t('users.columns.today')}>
                <Counts counts={row.usage.today} />
              </td>
              <td data-label={t('users.columns.month')}>
                <Counts counts={row.usage.month} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
