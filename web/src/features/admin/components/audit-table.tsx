import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { AuditEntry, PlanType } from '@/types/generated';
import { PLANS } from '../api/admin-api';
import { formatDateTime, useLocale } from '../utils/format';
import styles from './admin.module.css';

/** The `actor` of a change made with `chat-server users …`. */
const COMMAND_LINE = 'command line';

const SERVICES = ['responses', 'webSearches', 'imageGenerations'] as const;
type Service = (typeof SERVICES)[number];

/** The keys the server's changes use that have a name in the admin's language. */
const NAMED_KEYS = [
  'planType',
  'endDate',
  'suspended',
  'service',
  'used',
  'amount',
  'refundedAmount',
  'totalAmount',
  'creditNote',
  'role',
] as const;
type NamedKey = (typeof NAMED_KEYS)[number];
const isNamed = (key: string): key is NamedKey => (NAMED_KEYS as readonly string[]).includes(key);

/** "planType: plus → free, endDate: … → …": every key either side names, in a stable order. */
function changes(entry: AuditEntry): { key: string; before: string | undefined; after: string | undefined }[] {
  // The named keys first, in their order (the plan before its end), then the rest.
  const rank = (key: string) => (isNamed(key) ? NAMED_KEYS.indexOf(key) : NAMED_KEYS.length);
  const keys = [...new Set([...Object.keys(entry.before), ...Object.keys(entry.after)])].sort(
    (a, b) => rank(a) - rank(b) || a.localeCompare(b),
  );
  return keys.map((key) => ({ key, before: entry.before[key], after: entry.after[key] }));
}

/**
 * A value as the log keeps it (text), in the admin's words where it can be: a plan's
 * name, a role, yes or no, a timestamp as a date. Anything else is shown as it is.
 */
function useShown() {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  return (key: string, value: string | undefined): string => {
    if (value === undefined || value === '') return '—';
    if (key === 'planType' && (PLANS as readonly string[]).includes(value)) return t(`plans.${value as PlanType}`);
    if (key === 'role' && (value === 'user' || value === 'admin')) return t(`roles.${value}`);
    if (key === 'service' && (SERVICES as readonly string[]).includes(value)) return t(`services.${value as Service}`);
    if (value === 'true' || value === 'false') return t(value === 'true' ? 'audit.fields.yes' : 'audit.fields.no');
    return /^\d{4}-\d{2}-\d{2}T/.test(value) ? formatDateTime(value, locale) : value;
  };
}

/**
 * Audit rows, newest first as the server sends them. `showTarget` is off on a user's own
 * page, where every row is about them.
 */
export function AuditTable({ entries, showTarget = true, label }: { entries: AuditEntry[]; showTarget?: boolean; label: string }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const shown = useShown();
  return (
    <table className={[styles.table, styles.stack].join(' ')} aria-label={label} data-testid="admin-audit-table">
      <thead>
        <tr>
          <th scope="col">{t('audit.columns.at')}</th>
          <th scope="col">{t('audit.columns.actor')}</th>
          <th scope="col">{t('audit.columns.action')}</th>
          {showTarget && <th scope="col">{t('audit.columns.target')}</th>}
          <th scope="col">{t('audit.columns.reason')}</th>
          <th scope="col">{t('audit.columns.change')}</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr key={entry._id} data-testid="admin-audit-row" data-action={entry.action}>
            <td data-label={t('audit.columns.at')}>
              <time dateTime={entry.at}>{formatDateTime(entry.at, locale)}</time>
            </td>
            <td data-label={t('audit.columns.actor')}>
              {/* The server words the command line in English: it is a marker, shown translated. */}
              {!entry.actorId && entry.actor === COMMAND_LINE ? (
                <span className={styles.muted}>{t('audit.commandLine')}</span>
              ) : (
                entry.actor
              )}
            </td>
            <td data-label={t('audit.columns.action')}>{t(`audit.actions.${entry.action}`)}</td>
            {showTarget && (
              <td data-label={t('audit.columns.target')}>
                {entry.targetUserId ? (
                  <Link to={`/admin/users/${encodeURIComponent(entry.targetUserId)}`}>{entry.target}</Link>
                ) : (
                  <span>
                    {entry.target} <span className={styles.muted}>({t('audit.deleted')})</span>
                  </span>
                )}
              </td>
            )}
            <td data-label={t('audit.columns.reason')} className={styles.reason}>
              {entry.reason}
            </td>
            <td data-label={t('audit.columns.change')}>
              <ul className={styles.changes}>
                {changes(entry).map(({ key, before, after }) => (
                  <li key={key}>
                    <span className={styles.muted}>{isNamed(key) ? t(`audit.fields.${key}`) : key}:</span> {shown(key, before)} <span aria-hidden="true">→</span>
                    <span className="visually-hidden">{t('audit.to')}</span> {shown(key, after)}
                  </li>
                ))}
              </ul>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
