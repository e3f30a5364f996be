import { useEffect, useId, useState, type ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { useInvoiceDownload } from '@/hooks/use-invoice-download';
import { Spinner } from '@/components/spinner';
import { useDocumentTitle } from '@/hooks/use-document-title';
import type { AdminUserDetail, Invoice, Payment, UsageCounter } from '@/types/generated';
import { adminApi, type ResetService } from '../api/admin-api';
import { useAdminUserStore } from '../stores/admin-stores';
import { formatDateTime, formatDay, formatMoney, formatNumber, useLocale } from '../utils/format';
import { PlanDialog, RefundDialog, SuspendDialog, UsageResetDialog } from './action-dialogs';
import styles from './admin.module.css';
import { AdminNav } from './admin-nav';
import { AuditTable } from './audit-table';

/** The dialog open on the page, if any: one at a time. */
type OpenDialog =
  | { kind: 'plan' }
  | { kind: 'suspend' }
  | { kind: 'usage'; service: ResetService }
  | { kind: 'refund'; payment: Payment }
  | null;

/** `/admin/users/:id`: one user as the operator sees them, with the actions on them. */
export function UserPage() {
  const { t } = useTranslation('admin');
  const { id = '' } = useParams();
  const { detail, status, error, load } = useAdminUserStore();
  const [dialog, setDialog] = useState<OpenDialog>(null);
  const shown = detail?.user._id === id ? detail : null;
  useDocumentTitle(shown ? shown.user.email : t('user.title'));

  useEffect(() => {
    void load(id);
  }, [id, load]);

  if (!shown) {
    return (
      <div className={styles.page}>
        <AdminNav />
        {status === 'error' ? (
          <>
            <h1>{t('user.title')}</h1>
            <FormAlert>{error ?? t('user.loadError')}</FormAlert>
            <Link to="/admin/users">{t('user.back')}</Link>
          </>
        ) : (
          <Spinner label={t('user.loading')} />
        )}
      </div>
    );
  }

  const close = () => setDialog(null);
  return (
    <div className={styles.page} data-testid="admin-user-page">
      <AdminNav />
      <Link to="/admin/users" className={styles.back}>
        ← {t('user.back')}
      </Link>
      <h1 className={[styles.breakAnywhere, styles.title].join(' ')}>{shown.user.email}</h1>
      <FormAlert>{error}</FormAlert>
      <ProfileCard detail={shown} onSuspend={() => setDialog({ kind: 'suspend' })} />
      <PlanCard detail={shown} onChange={() => setDialog({ kind: 'plan' })} />
      <UsageCard detail={shown} onReset={(service) => setDialog({ kind: 'usage', service })} />
      <PaymentsCard payments={shown.payments} onRefund={(payment) => setDialog({ kind: 'refund', payment })} />
      <InvoicesCard invoices={shown.invoices} />
      <Card title={t('user.audit.title')} testId="admin-user-audit">
        {shown.audit.length === 0 ? (
          <p className={styles.muted}>{t('user.audit.empty')}</p>
        ) : (
          <AuditTable entries={shown.audit} showTarget={false} label={t('user.audit.title')} />
        )}
        <Link to={`/admin/audit?userId=${encodeURIComponent(id)}`} data-testid="admin-user-audit-link">
          {t('user.audit.all')}
        </Link>
      </Card>

      {dialog?.kind === 'plan' && <PlanDialog current={shown.subscription.data.planType} onClose={close} />}
      {dialog?.kind === 'suspend' && <SuspendDialog suspended={shown.user.status === 'suspended'} onClose={close} />}
      {dialog?.kind === 'usage' && <UsageResetDialog service={dialog.service} onClose={close} />}
      {dialog?.kind === 'refund' && <RefundDialog payment={dialog.payment} onClose={close} />}
    </div>
  );
}

function Card({ title, children, testId, action }: { title: string; children: ReactNode; testId: string; action?: ReactNode }) {
  const headingId = useId();
  return (
    <section className={styles.card} aria-labelledby={headingId} data-testid={testId}>
      <div className={styles.cardHeader}>
        <h2 id={headingId}>{title}</h2>
        {action}
      </div>
      {children}
    </section>
  );
}

/** Label–value pairs as a description list. */
function Facts({ items }: { items: [string, ReactNode, string?][] }) {
  return (
    <dl className={styles.facts}>
      {items.map(([label, value, testId]) => (
        <div key={label} className={styles.fact}>
          <dt>{label}</dt>
          <dd data-testid={testId}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function ProfileCard({ detail, onSuspend }: { detail: AdminUserDetail; onSuspend: () => void }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const { user, suspendedAt } = detail;
  const suspended = user.status === 'suspended';
  // A deleted account or an unverified registration has nothing to suspend.
  const canSuspend = user.status === 'active' || suspended;
  return (
    <Card
      title={t('user.profile.title')}
      testId="admin-user-profile"
      action={
        canSuspend && (
          <Button variant={suspended ? 'secondary' : 'danger'} onClick={onSuspend} data-testid="admin-suspend">
            {suspended ? t('actions.unsuspend.button') : t('actions.suspend.button')}
          </Button>
        )
      }
    >
      <Facts
        items={[
          [t('user.profile.email'), <span className={styles.breakAnywhere}>{user.email}</span>],
          [t('user.profile.name'), user.name || '—'],
          [t('user.profile.role'), t(`roles.${user.role}`)],
          [
            t('user.profile.status'),
            <span className={styles.badge} data-status={user.status}>
              {t(`status.${user.status}`)}
            </span>,
            'admin-user-status',
          ],
          [t('user.profile.created'), formatDateTime(user.createdAt, locale)],
          [t('user.profile.lastActive'), user.lastActiveAt ? formatDateTime(user.lastActiveAt, locale) : t('users.never')],
          ...(suspendedAt
            ? [[t('user.profile.suspendedAt'), formatDateTime(suspendedAt, locale), 'admin-user-suspended-at'] as [string, ReactNode, string]]
            : []),
        ]}
      />
    </Card>
  );
}

function PlanCard({ detail, onChange }: { detail: AdminUserDetail; onChange: () => void }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const { data, pendingSubscription } = detail.subscription;
  const canChange = detail.user.status !== 'deleted';
  let ends: string;
  if (!data.endDate) ends = t('user.plan.noEnd');
  else if (data.cancelAtPeriodEnd) ends = t('user.plan.endsOn', { date: formatDay(data.endDate, locale) });
  else if (data.autoRenew) ends = t('user.plan.renewsOn', { date: formatDay(data.endDate, locale) });
  else ends = t('user.plan.endsOn', { date: formatDay(data.endDate, locale) });
  return (
    <Card
      title={t('user.plan.title')}
      testId="admin-user-plan"
      action={
        canChange && (
          <Button variant="secondary" onClick={onChange} data-testid="admin-change-plan">
            {t('actions.plan.button')}
          </Button>
        )
      }
    >
      <Facts
        items={[
          [t('user.plan.plan'), t(`plans.${data.planType}`), 'admin-user-plan-type'],
          [t('user.plan.end'), ends, 'admin-user-plan-end'],
          [
            t('user.plan.pending'),
            pendingSubscription
              ? pendingSubscription.activationDate
                ? t('user.plan.pendingOn', {
                    plan: t(`plans.${pendingSubscription.planType}`),
                    date: formatDay(pendingSubscription.activationDate, locale),
                  })
                : t(`plans.${pendingSubscription.planType}`)
              : t('user.plan.noPending'),
            'admin-user-plan-pending',
          ],
        ]}
      />
    </Card>
  );
}

/** The counters of the user's own usage call, by the reset call's service names. */
const USAGE_ROWS = [
  { key: 'responses', service: 'responses' },
  { key: 'searches', service: 'webSearches' },
  { key: 'images', service: 'imageGenerations' },
] as const;

function CounterText({ counter }: { counter: UsageCounter }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  if (counter.unlimited || counter.limit === null) {
    return <>{t('user.usage.unlimited', { used: formatNumber(counter.used, locale) })}</>;
  }
  return <>{t('user.usage.ofLimit', { used: formatNumber(counter.used, locale), limit: formatNumber(counter.limit, locale) })}</>;
}

function UsageCard({ detail, onReset }: { detail: AdminUserDetail; onReset: (service: ResetService) => void }) {
  const { t } = useTranslation('admin');
  const { services } = detail.usage.limitInfo;
  return (
    <Card title={t('user.usage.title')} testId="admin-user-usage">
      <table className={[styles.table, styles.stack].join(' ')} aria-label={t('user.usage.title')}>
        <thead>
          <tr>
            <th scope="col">{t('user.usage.service')}</th>
            <th scope="col">{t('user.usage.today')}</th>
            <th scope="col">{t('user.usage.month')}</th>
            <th scope="col">
              <span className="visually-hidden">{t('user.usage.actions')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {USAGE_ROWS.map(({ key, service }) => (
            <tr key={key} data-testid={`admin-usage-${service}`}>
              <th scope="row" className={styles.primaryCell}>
                {t(`services.${service}`)}
              </th>
              <td data-label={t('user.usage.today')} data-testid="admin-usage-today">
                <CounterText counter={services[key].daily} />
              </td>
              <td data-label={t('user.usage.month')}>
                <CounterText counter={services[key].monthly} />
              </td>
              <td className={styles.actionCell}>
                <Button
                  variant="secondary"
                  size="small"
                  disabled={services[key].daily.used === 0}
                  onClick={() => onReset(service)}
                  aria-label={t('actions.usage.buttonFor', { service: t(`services.${service}`) })}
                  data-testid={`admin-usage-reset-${service}`}
                >
                  {t('actions.usage.button')}
                </Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}

function PaymentsCard({ payments, onRefund }: { payments: Payment[]; onRefund: (payment: Payment) => void }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  return (
    <Card title={t('user.payments.title')} testId="admin-user-payments">
      {payments.length === 0 ? (
        <p className={styles.muted}>{t('user.payments.empty')}</p>
      ) : (
        <table className={[styles.table, styles.stack].join(' ')} aria-label={t('user.payments.title')}>
          <thead>
            <tr>
              <th scope="col">{t('user.payments.date')}</th>
              <th scope="col">{t('user.payments.plan')}</th>
              <th scope="col">{t('user.payments.status')}</th>
              <th scope="col" className={styles.number}>
                {t('user.payments.total')}
              </th>
              <th scope="col" className={styles.number}>
                {t('user.payments.refunded')}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t('user.usage.actions')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {payments.map((payment) => {
              const refundable = payment.status === 'succeeded' && payment.refundedAmount < payment.totalAmount;
              return (
                <tr key={payment._id} data-testid="admin-payment-row" data-payment-id={payment._id}>
                  <td data-label={t('user.payments.date')} className={styles.primaryCell}>
                    <time dateTime={payment.createdAt}>{formatDateTime(payment.createdAt, locale)}</time>
                  </td>
                  <td data-label={t('user.payments.plan')}>
                    <span>
                      {t(`plans.${payment.planType}`)}{' '}
                      <span className={styles.muted}>
                        ({t(`user.payments.kind.${payment.kind}`)}, {payment.provider})
                      </span>
                    </span>
                  </td>
                  <td data-label={t('user.payments.status')}>
                    <span className={styles.badge} data-status={payment.status}>
                      {t(`user.payments.statusLabel.${payment.status}`)}
                    </span>
                  </td>
                  <td data-label={t('user.payments.total')} className={styles.number}>
                    {formatMoney(payment.totalAmount, payment.currency, locale)}
                  </td>
                  <td data-label={t('user.payments.refunded')} className={styles.number} data-testid="admin-payment-refunded">
                    {payment.refundedAmount > 0 ? formatMoney(payment.refundedAmount, payment.currency, locale) : '—'}
                  </td>
                  <td className={styles.actionCell}>
                    {payment.status === 'succeeded' && (
                      <Button
                        variant="secondary"
                        size="small"
                        disabled={!refundable}
                        onClick={() => onRefund(payment)}
                        aria-label={t('actions.refund.buttonFor', {
                          total: formatMoney(payment.totalAmount, payment.currency, locale),
                          date: formatDay(payment.createdAt, locale),
                        })}
                        data-testid="admin-refund"
                      >
                        {t('actions.refund.button')}
                      </Button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Card>
  );
}

/** The user's invoices and credit notes, each with its PDF (the admin's own route). */
function InvoicesCard({ invoices }: { invoices: Invoice[] }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const { downloading, error, download } = useInvoiceDownload(adminApi.getInvoicePdf);

  return (
    <Card title={t('user.invoices.title')} testId="admin-user-invoices">
      <FormAlert>{error}</FormAlert>
      {invoices.length === 0 ? (
        <p className={styles.muted}>{t('user.invoices.empty')}</p>
      ) : (
        <table className={[styles.table, styles.stack].join(' ')} aria-label={t('user.invoices.title')}>
          <thead>
            <tr>
              <th scope="col">{t('user.invoices.number')}</th>
              <th scope="col">{t('user.invoices.date')}</th>
              <th scope="col">{t('user.invoices.plan')}</th>
              <th scope="col" className={styles.number}>
                {t('user.invoices.net')}
              </th>
              <th scope="col" className={styles.number}>
                {t('user.invoices.vat')}
              </th>
              <th scope="col" className={styles.number}>
                {t('user.invoices.total')}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t('user.invoices.pdf')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {invoices.map((invoice) => (
              <tr key={invoice._id} data-testid="admin-invoice-row" data-kind={invoice.kind} data-number={invoice.number}>
                <td data-label={t('user.invoices.number')} className={styles.primaryCell}>
                  <span>
                    {invoice.number}
                    {invoice.kind === 'credit_note' && (
                      <>
                        {' '}
                        <span className={styles.badge} data-kind="credit_note">
                          {t('user.invoices.creditNote')}
                        </span>
                        {invoice.creditNoteOf && (
                          <span className={styles.subline}>
                            {/* The number stays on one line: it breaks at its hyphen otherwise. */}
                            <Trans
                              t={t}
                              i18nKey="user.invoices.refersTo"
                              values={{ number: invoice.creditNoteOf }}
                              components={{ number: <span className={styles.nowrap} /> }}
                            />
                          </span>
                        )}
                      </>
                    )}
                  </span>
                </td>
                <td data-label={t('user.invoices.date')}>
                  <time dateTime={invoice.issuedAt}>{formatDay(invoice.issuedAt, locale)}</time>
                </td>
                <td data-label={t('user.invoices.plan')}>{invoice.planName}</td>
                <td data-label={t('user.invoices.net')} className={styles.number}>
                  {formatMoney(invoice.netAmount, invoice.currency, locale)}
                </td>
                <td data-label={t('user.invoices.vat')} className={styles.number}>
                  {formatMoney(invoice.vatAmount, invoice.currency, locale)}
                </td>
                <td data-label={t('user.invoices.total')} className={[styles.number, styles.strong].join(' ')}>
                  {formatMoney(invoice.totalAmount, invoice.currency, locale)}
                </td>
                <td>
                  <Button
                    variant="secondary"
                    loading={downloading === invoice._id}
                    onClick={() => void download(invoice)}
                    aria-label={t('user.invoices.downloadNumber', { number: invoice.number })}
                    data-testid="admin-invoice-pdf"
                  >
                    {t('user.invoices.pdf')}
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
