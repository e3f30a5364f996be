import { useId, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { useAsyncAction } from '@/hooks/use-async-action';
import { isApiError } from '@/lib/api-client';
import { randomId } from '@/lib/random-id';
import { subscriptionApi } from '../api/subscription-api';
import { CURRENCIES, type BillingCycle, type Currency, type Plan } from '../api/types';
import { useSubscriptionStore } from '../stores/subscription-store';
import { formatAddress } from '../utils/billing-rules';
import { browser } from '../utils/browser';
import { defaultCurrency, formatMoney, formatPercent } from '../utils/format';
import { useLocale } from '../utils/use-locale';
import { ChoiceGroup } from './choice-group';
import styles from './checkout-dialog.module.css';
import formStyles from './forms.module.css';

/** SPEC §9: a one-time payment buys 30 days (`one_time_days` of the plan catalogue). */
const ONE_TIME_DAYS = 30;

type PaymentMethodChoice = 'credit_card' | 'paypal';

export interface CheckoutDialogProps {
  plan: Plan;
  onClose: () => void;
  /** Billing info is filled in on the page (SPEC §5: before paying), not in this dialog. */
  onEditBilling: () => void;
}

/**
 * An upgrade: the billing cycle, currency and payment method, what it costs, then off to
 * the provider's checkout page. Opened only once billing info exists.
 */
export function CheckoutDialog({ plan, onClose, onEditBilling }: CheckoutDialogProps) {
  const { t } = useTranslation(['subscription', 'common']);
  const locale = useLocale();
  const navigate = useNavigate();
  const summaryTitleId = useId();
  const billingInfo = useSubscriptionStore((s) => s.billingInfo);
  const vatRate = useSubscriptionStore((s) => s.vatRate);
  const applySubscription = useSubscriptionStore((s) => s.applySubscription);
  const action = useAsyncAction();
  const [cycle, setCycle] = useState<BillingCycle>('monthly');
  const [currency, setCurrency] = useState<Currency>(() => defaultCurrency(locale));
  const [method, setMethod] = useState<PaymentMethodChoice>('credit_card');
  const [redirecting, setRedirecting] = useState(false);
  // One key per choice: a retry of the same choice (a double click, a lost answer) gets
  // the same payment back; a different choice is a new payment.
  const idempotency = useRef<{ choice: string; key: string } | null>(null);

  const price = plan.prices[currency];

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    const choice = `${plan.planType}|${cycle}|${currency}`;
    if (idempotency.current?.choice !== choice) idempotency.current = { choice, key: randomId() };
    const { key } = idempotency.current;
    await action.run(async () => {
      try {
        const answer = await subscriptionApi.startCheckout(
          { planType: plan.planType, paymentMethod: 'credit_card', billingCycle: cycle, currency },
          key,
        );
        if (!answer.requiresPayment) {
          applySubscription(answer);
          onClose();
        } else if (answer.payment.status === 'pending' && answer.checkoutUrl) {
          setRedirecting(true);
          browser.assign(answer.checkoutUrl);
        } else {
          // Charged already (a Stripe upgrade on the saved card), or a retried key whose
          // payment closed: its status page follows it to the end.
          void navigate(`/payment/status?paymentId=${encodeURIComponent(answer.payment._id)}`);
        }
      } catch (error) {
        if (isApiError(error) && error.code === 'billing_info_required') {
          onEditBilling();
          return;
        }
        throw error;
      }
    });
  };

  return (
    <Dialog open onClose={onClose} title={t('checkout.title', { plan: plan.name })} className={styles.dialog}>
      {billingInfo && (
        <form className={formStyles.form} onSubmit={onSubmit} noValidate>
          <FormAlert>{action.error}</FormAlert>
          <ChoiceGroup<BillingCycle>
            legend={t('checkout.cycle.legend')}
            value={cycle}
            onChange={setCycle}
            choices={[
              { value: 'monthly', label: t('checkout.cycle.monthly'), hint: t('checkout.cycle.monthlyHint') },
              {
                value: 'one_time',
                label: t('checkout.cycle.one_time'),
                hint: t('checkout.cycle.one_timeHint', { days: ONE_TIME_DAYS }),
              },
            ]}
          />
          <ChoiceGroup<Currency>
            legend={t('checkout.currency')}
            value={currency}
            onChange={setCurrency}
            inline
            choices={CURRENCIES.map((value) => ({ value, label: value }))}
          />
          <ChoiceGroup<PaymentMethodChoice>
            legend={t('checkout.method.legend')}
            value={method}
            onChange={setMethod}
            inline
            choices={[
              { value: 'credit_card', label: t('checkout.method.credit_card') },
              {
                value: 'paypal',
                label: t('checkout.method.paypal'),
                hint: t('checkout.method.notAvailable'),
                disabled: true,
              },
            ]}
          />

          <section className={styles.summary} aria-labelledby={summaryTitleId}>
            <h3 id={summaryTitleId} className={styles.summaryTitle}>
              {t('checkout.summary.title')}
            </h3>
            <dl className={styles.amounts}>
              <div>
                <dt>{t('checkout.summary.net')}</dt>
                <dd>{formatMoney(price.net, currency, locale)}</dd>
              </div>
              <div>
                <dt>{t('checkout.summary.vat', { rate: formatPercent(vatRate, locale) })}</dt>
                <dd>{formatMoney(price.vat, currency, locale)}</dd>
              </div>
              <div className={styles.total}>
                <dt>{t('checkout.summary.total')}</dt>
                <dd>{formatMoney(price.total, currency, locale)}</dd>
              </div>
            </dl>
            <p className={formStyles.note}>
              {cycle === 'monthly'
                ? t('checkout.summary.perMonth')
                : t('checkout.summary.oneTime', { days: ONE_TIME_DAYS })}
            </p>
          </section>

          <div className={styles.invoiceTo}>
            <p className={formStyles.note}>
              {t('checkout.invoiceTo')}:{' '}
              <span className={styles.invoiceName}>{billingInfo.companyName ?? billingInfo.name}</span>,{' '}
              {formatAddress(billingInfo)}
            </p>
            <Button variant="link" onClick={onEditBilling}>
              {t('checkout.editBilling')}
            </Button>
          </div>

          <p className={formStyles.note}>{t('checkout.startsNote', { plan: plan.name })}</p>
          <p className={formStyles.note}>{t('checkout.redirectNote')}</p>
          <div className={formStyles.actions}>
            <Button variant="secondary" onClick={onClose} disabled={action.pending || redirecting}>
              {t('common:actions.cancel')}
            </Button>
            <Button type="submit" loading={action.pending || redirecting} data-testid="confirm-dialog-confirm">
              {t('checkout.submit')}
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
