import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { useAsyncAction } from '@/hooks/use-async-action';
import { isApiError } from '@/lib/api-client';
import { randomId } from '@/lib/random-id';
import type { BillingCycle, Currency, PaymentConfig, PaymentRequired, Plan } from '@/types/generated';
import { getPaymentsConfig } from '../api/payments-config';
import { subscriptionApi } from '../api/subscription-api';
import { CURRENCIES, isPaymentRequired } from '../api/types';
import { useSubscriptionStore } from '../stores/subscription-store';
import { cardErrorKey } from '../stripe/card-errors';
import { confirmCard } from '../stripe/confirm-card';
import type { MountedCard, StripeError } from '../stripe/stripe-js';
import { formatAddress } from '../utils/billing-rules';
import { browser } from '../utils/browser';
import { defaultCurrency, formatMoney, formatPercent } from '../utils/format';
import { useLocale } from '@/hooks/use-locale';
import { CardField } from './card-field';
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

type StripeSetup = PaymentConfig & { publishableKey: string; jsUrl: string };

/** `undefined` while asking; null when the server did not say (then a checkout URL is followed). */
function usePaymentConfig(): PaymentConfig | null | undefined {
  const [config, setConfig] = useState<PaymentConfig | null | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    getPaymentsConfig().then(
      (answer) => {
        if (!stopped) setConfig(answer);
      },
      () => {
        if (!stopped) setConfig(null);
      },
    );
    return () => {
      stopped = true;
    };
  }, []);
  return config;
}

const statusPath = (paymentId: string) => `/payment/status?paymentId=${encodeURIComponent(paymentId)}`;
const failedPath = (paymentId: string) => `/payment-cancel?paymentId=${encodeURIComponent(paymentId)}&status=failed`;

/**
 * An upgrade: the billing cycle, currency and payment method, what it costs, then the
 * payment: with Stripe, the card form here (Stripe.js Elements); with the demo provider,
 * off to its checkout page. Opened only once billing info exists.
 */
export function CheckoutDialog({ plan, onClose, onEditBilling }: CheckoutDialogProps) {
  const { t } = useTranslation(['subscription', 'common', 'validation']);
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
  const config = usePaymentConfig();
  const stripeSetup: StripeSetup | null =
    config?.provider === 'stripe' && config.publishableKey && config.jsUrl
      ? { ...config, publishableKey: config.publishableKey, jsUrl: config.jsUrl }
      : null;
  const [card, setCard] = useState<MountedCard | null>(null);
  const [cardError, setCardError] = useState<StripeError | null>(null);
  const [cardName, setCardName] = useState(() => billingInfo?.name ?? '');
  const [cardNameMissing, setCardNameMissing] = useState(false);
  // While Stripe.js confirms, its 3-D Secure window must be reachable: the dialog stops being modal.
  const [confirming, setConfirming] = useState(false);
  // The payment of this choice that waits for its card: after a card error the same
  // PaymentIntent is confirmed again instead of asking the server for a new one.
  const awaitingCard = useRef<{ choice: string; answer: PaymentRequired } | null>(
    null,
  );
  // One key per choice: a retry of the same choice (a double click, a lost answer) gets
  // the same payment back; a different choice is a new payment.
  const idempotency = useRef<{ choice: string; key: string } | null>(null);

  const price = plan.prices[currency];
  const cardErrorText = (() => {
    const key = cardErrorKey(cardError);
    if (key) return t(`card.errors.${key}`);
    return cardError?.message ?? null;
  })();

  const payByCard = async (answer: PaymentRequired, clientSecret: string) => {
    if (!card) {
      action.setError(t('card.notReady'));
      return;
    }
    setConfirming(true);
    const outcome = await confirmCard(card, clientSecret, {
      name: cardName.trim(),
      address: { postal_code: billingInfo?.postalCode ?? '' },
    }).finally(() => setConfirming(false));
    const paymentId = answer.payment._id;
    if (outcome.kind === 'confirmed') {
      awaitingCard.current = null;
      // The plan starts when our server hears of the payment from Stripe, not on the browser's word.
      void navigate(statusPath(paymentId));
    } else if (outcome.kind === 'fixCard') {
      setCardError(outcome.error);
    } else {
      awaitingCard.current = null;
      void navigate(failedPath(paymentId));
    }
  };

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    if (stripeSetup) {
      const nameMissing = cardName.trim() === '';
      setCardNameMissing(nameMissing);
      if (nameMissing || cardErrorKey(cardError)) return;
    }
    const choice = `${plan.planType}|${cycle}|${currency}`;
    if (idempotency.current?.choice !== choice) idempotency.current = { choice, key: randomId() };
    const { key } = idempotency.current;
    await action.run(async () => {
      try {
        const waiting = awaitingCard.current?.choice === choice ? awaitingCard.current.answer : null;
        const answer =
          waiting ??
          (await subscriptionApi.startCheckout(
            { planType: plan.planType, paymentMethod: 'credit_card', billingCycle: cycle, currency },
            key,
          ));
        if (!isPaymentRequired(answer)) {
          applySubscription(answer);
          onClose();
        } else if (answer.payment.status !== 'pending') {
          // A retried key whose payment already closed: its status page says how it ended.
          void navigate(statusPath(answer.payment._id));
        } else if (answer.clientSecret) {
          awaitingCard.current = { choice, answer };
          await payByCard(answer, answer.clientSecret);
        } else if (answer.checkoutUrl) {
          setRedirecting(true);
          browser.assign(answer.checkoutUrl);
        } else {
          // Charged already (a Stripe upgrade on the saved card): its status page follows
          // it to the end.
          void navigate(statusPath(answer.payment._id));
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
    <Dialog
      open
      modal={!confirming}
      onClose={onClose}
      title={t('checkout.title', { plan: plan.name })}
      className={styles.dialog}
    >
      {billingInfo && (
        <form className={formStyles.form} onSubmit={onSubmit} noValidate>
          <FormAlert>{action.error}</FormAlert>
          <ChoiceGroup<BillingCycle>
            legend={t('checkout.cycle.legend')}
            value={cycle}
            onChange={setCycle}
            columns
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

          {stripeSetup && (
            <fieldset className={formStyles.fieldset} data-testid="card-form">
              <legend className={formStyles.legend}>{t('card.title')}</legend>
              <div className={styles.cardFields}>
                <TextField
                  label={t('card.name')}
                  value={cardName}
                  onChange={(event) => {
                    setCardName(event.target.value);
                    setCardNameMissing(false);
                  }}
                  autoComplete="cc-name"
                  required
                  error={cardNameMissing ? t('validation:nameRequired') : null}
                />
                <CardField
                  publishableKey={stripeSetup.publishableKey}
                  jsUrl={stripeSetup.jsUrl}
                  error={cardErrorText}
                  onChange={setCardError}
                  onReady={setCard}
                />
              </div>
            </fieldset>
          )}

          <p className={formStyles.note}>
            {t('checkout.startsNote', { plan: plan.name })}{' '}
            {stripeSetup ? t('card.secureNote') : t('checkout.redirectNote')}
          </p>
          {/* Stays in sight while the choices above scroll (issue 32: it was below the fold at 1280 × 800). */}
          <div className={`${formStyles.actions} ${styles.footer}`}>
            <Button variant="secondary" onClick={onClose} disabled={action.pending || redirecting}>
              {t('common:actions.cancel')}
            </Button>
            <Button
              type="submit"
              loading={action.pending || redirecting}
              disabled={stripeSetup !== null && card === null}
              data-testid="confirm-dialog-confirm"
            >
              {stripeSetup ? t('card.pay', { amount: formatMoney(price.total, currency, locale) }) : t('checkout.submit')}
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
