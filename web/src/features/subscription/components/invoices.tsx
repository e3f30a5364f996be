import { useTranslation } from 'react-i18next';
import type { Payment, Plan } from '../api/types';
import { formatDateTime, formatMoney, formatPercent } from '../utils/format';
import { useLocale } from '../utils/use-locale';
import styles from './invoices.module.css';

/** The user's payments, newest first: date, plan, net, VAT, total and status. */
export function Invoices({ payments, plans, headingId }: { payments: Payment[]; plans: Plan[]; headingId: string }) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const planName = (payment: Payment) => plans.find((plan) => plan.planType === payment.planType)?.name ?? payment.planType;

  return (
    <section aria-labelledby={headingId}>
      <h3 id={headingId}>{t('invoices.title')}</h3>
      {payments.length === 0 ? (
        <p className={styles.empty}>{t('invoices.empty')}</p>
      ) : (
        <table className={styles.table}>
          <thead>
            <tr>
              <th scope="col">{t('invoices.date')}</th>
              <th scope="col">{t('invoices.plan')}</th>
              <th scope="col" className={styles.number}>
                {t('invoices.net')}
              </th>
              <th scope="col" className={styles.number}>
                {t('invoices.vat')}
              </th>
              <th scope="col" className={styles.number}>
                {t('invoices.total')}
              </th>
              <th scope="col">{t('invoices.status')}</th>
            </tr>
          </thead>
          <tbody>
            {payments.map((payment) => (
              <tr key={payment._id}>
                {/* The labels repeat inside each cell for the stacked layout on phones, where
                    each cell is a row of its label and one span of content. */}
                <td data-label={t('invoices.date')}>
                  <time dateTime={payment.createdAt}>{formatDateTime(payment.createdAt, locale)}</time>
                </td>
                <td data-label={t('invoices.plan')}>
                  <span>
                    {planName(payment)}{' '}
                    <span className={styles.muted}>
                      ({t(`invoices.cycle.${payment.billingCycle}`)}
                      {payment.kind === 'renewal' && `, ${t('invoices.renewal')}`})
                    </span>
                  </span>
                </td>
                <td data-label={t('invoices.net')} className={styles.number}>
                  {formatMoney(payment.netAmount, payment.currency, locale)}
                </td>
                <td data-label={t('invoices.vat')} className={styles.number}>
                  <span>
                    {formatMoney(payment.vatAmount, payment.currency, locale)}{' '}
                    <span className={styles.muted}>({formatPercent(payment.vatRate, locale)})</span>
                  </span>
                </td>
                <td data-label={t('invoices.total')} className={[styles.number, styles.total].join(' ')}>
                  {formatMoney(payment.totalAmount, payment.currency, locale)}
                </td>
                <td data-label={t('invoices.status')}>
                  <span className={styles.status} data-status={payment.status}>
                    {t(`invoices.statusLabel.${payment.status}`)}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
