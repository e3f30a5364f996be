import { Trans, useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { useInvoiceDownload } from '@/hooks/use-invoice-download';
import type { Invoice } from '@/types/generated';
import { subscriptionApi } from '../api/subscription-api';
import { formatDate, formatMoney } from '../utils/format';
import { useLocale } from '@/hooks/use-locale';
import styles from './invoices.module.css';

/**
 * The user's invoices and credit notes, newest first: number, date, plan and gross, each
 * with its PDF. A credit note is marked as one, with the invoice it refers to.
 */
export function InvoiceList({ invoices, headingId }: { invoices: Invoice[]; headingId: string }) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const { downloading, error, download } = useInvoiceDownload(subscriptionApi.getInvoicePdf);

  return (
    <section aria-labelledby={headingId} data-testid="invoices">
      <h3 id={headingId}>{t('invoices.title')}</h3>
      <FormAlert>{error}</FormAlert>
      {invoices.length === 0 ? (
        <p className={styles.empty}>{t('invoices.empty')}</p>
      ) : (
        <table className={styles.table}>
          <thead>
            <tr>
              <th scope="col">{t('invoices.number')}</th>
              <th scope="col">{t('invoices.date')}</th>
              <th scope="col">{t('invoices.plan')}</th>
              <th scope="col" className={styles.number}>
                {t('invoices.total')}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t('invoices.pdf')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {invoices.map((invoice) => (
              <tr key={invoice._id} data-testid={`invoice-${invoice.number}`}>
                {/* The labels repeat inside each cell for the stacked layout on phones. */}
                <td data-label={t('invoices.number')}>
                  {invoice.kind === 'credit_note' ? (
                    // A refund's credit note (negative amounts) names the invoice it refunds.
                    <span data-testid="credit-note">
                      {invoice.number}{' '}
                      <span className={styles.status} data-status="credit_note">
                        {t('invoices.creditNote')}
                      </span>
                      {invoice.creditNoteOf && (
                        <span className={styles.refersTo}>
                          {/* The number stays on one line: it breaks at its hyphen otherwise. */}
                          <Trans
                            t={t}
                            i18nKey="invoices.refersTo"
                            values={{ number: invoice.creditNoteOf }}
                            components={{ number: <span className={styles.nowrap} /> }}
                          />
                        </span>
                      )}
                    </span>
                  ) : (
                    invoice.number
                  )}
                </td>
                <td data-label={t('invoices.date')}>
                  <time dateTime={invoice.issuedAt}>{formatDate(invoice.issuedAt, locale)}</time>
                </td>
                <td data-label={t('invoices.plan')}>
                  <span>
                    {invoice.planName}{' '}
                    <span className={styles.muted}>({t(`invoices.cycle.${invoice.billingCycle}`)})</span>
                  </span>
                </td>
                <td data-label={t('invoices.total')} className={[styles.number, styles.total].join(' ')}>
                  {formatMoney(invoice.totalAmount, invoice.currency, locale)}
                </td>
                <td>
                  <Button
                    variant="secondary"
                    loading={downloading === invoice._id}
                    onClick={() => void download(invoice)}
                    aria-label={t('invoices.downloadNumber', { number: invoice.number })}
                    data-testid="invoice-download"
                  >
                    {t('invoices.download')}
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
