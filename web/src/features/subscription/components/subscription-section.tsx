import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation } from 'react-router';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { Spinner } from '@/components/spinner';
import { toast } from '@/components/toast';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useSocketEvent } from '@/hooks/use-chat-socket';
import type { Plan } from '@/types/generated';
import { subscriptionApi } from '../api/subscription-api';
import { isPaymentRequired } from '../api/types';
import { useSubscriptionStore } from '../stores/subscription-store';
import { formatDate, formatMoney } from '../utils/format';
import { planChoice, type PlanChoice } from '../utils/plan-change';
import { useLocale } from '@/hooks/use-locale';
import { BillingInfoPanel } from './billing-info-panel';
import { CheckoutDialog } from './checkout-dialog';
import { ConfirmDialog } from './confirm-dialog';
import { CurrentPlan, PendingChange } from './current-plan';
import { InvoiceList } from './invoice-list';
import cardStyles from './plan-card.module.css';
import { PlanCard } from './plan-card';
import styles from './subscription-section.module.css';

type OpenDialog =
  | { kind: 'checkout'; plan: Plan }
  | { kind: 'downgradeFree'; plan: Plan }
  | { kind: 'downgradePaid'; plan: Plan }
  | { kind: 'cancel' };

const noop = () => undefined;

/**
 * SPEC §2 "subscription management": the current plan, a scheduled change, the plans to
 * choose from, billing info and invoices. Rendered by the settings page at #subscription.
 */
export function SubscriptionSection() {
  const { t } = useTranslation(['subscription', 'common']);
  const locale = useLocale();
  const ids = { title: useId(), current: useId(), pending: useId(), plans: useId(), billing: useId(), invoices: useId() };
  const { status, plans, vatRate, vat, subscription, billingInfo, invoices, savingBillingInfo } = useSubscriptionStore();
  const { load, loadPayments, loadInvoices, loadPlans, applySubscription, applyBillingInfo, cancel, cancelPending } =
    useSubscriptionStore.getState();
  const [dialog, setDialog] = useState<OpenDialog | null>(null);
  const [editingBilling, setEditingBilling] = useState(false);
  // An upgrade chosen before billing info existed: its checkout opens once the info is saved.
  const [billingIntent, setBillingIntent] = useState<Plan | null>(null);
  const pendingAction = useAsyncAction();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const { hash } = useLocation();

  useEffect(() => {
    void load().catch(noop);
  }, [load]);

  // A link to /settings#subscription (from the payment pages) lands here once it is drawn.
  const ready = status === 'ready';
  useEffect(() => {
    if (!ready || hash !== '#subscription') return;
    headingRef.current?.scrollIntoView?.({ block: 'start' });
    headingRef.current?.focus({ preventScroll: true });
  }, [ready, hash]);

  // Every tab follows a change made in another one, a payment, or the scheduler.
  // (The subscription itself is the store's: see subscription-frames.ts.)
  useSocketEvent('subscription.updated', () => {
    void loadPayments().catch(noop);
    void loadInvoices().catch(noop);
  });
  useSocketEvent('settings.updated', ({ billingInfo: next }) => {
    applyBillingInfo(next);
    void loadPlans().catch(noop);
  });

  const askForBillingInfo = (plan: Plan) => {
    setDialog(null);
    setBillingIntent(plan);
    setEditingBilling(true);
  };

  const onChoose = (plan: Plan, choice: PlanChoice) => {
    if (choice === 'upgrade') {
      if (billingInfo) {
        setBillingIntent(null);
        setDialog({ kind: 'checkout', plan });
      } else {
        askForBillingInfo(plan);
      }
    } else if (choice === 'downgradeFree' || choice === 'downgradePaid') {
      setDialog({ kind: choice, plan });
    }
  };

  const closeDialog = () => setDialog(null);
  const endDate = subscription?.data.endDate ? formatDate(subscription.data.endDate, locale) : '';
  const currentName = subscription?.subscriptionPlan.name ?? '';

  const scheduleDowngrade = async (plan: Plan) => {
    const answer = await subscriptionApi.scheduleChange({ planType: plan.planType });
    if (isPaymentRequired(answer)) return; // Not for a lower plan: the server decides by rank.
    applySubscription(answer);
    toast.positive(t('done.downgradeScheduled', { plan: plan.name, date: endDate }));
  };

  const renewalPrice = (plan: Plan) => {
    const currency = subscription?.data.currency ?? 'EUR';
    return formatMoney(plan.prices[currency].net, currency, locale);
  };

  return (
    <section className={styles.section} aria-labelledby={ids.title}>
      <h2 id={ids.title} ref={headingRef} tabIndex={-1} className={styles.title}>
        {t('section.title')}
      </h2>
      <p className={styles.muted}>{t('section.intro')}</p>

      {status === 'error' && !subscription && (
        <div className={styles.stack}>
          <FormAlert>{t('section.loadError')}</FormAlert>
          <div>
            <Button variant="secondary" onClick={() => void load().catch(noop)}>
              {t('common:actions.retry')}
            </Button>
          </div>
        </div>
      )}
      {!subscription && status !== 'error' && <Spinner />}

      {subscription && (
        <div className={styles.stack}>
          <div className={styles.overview}>
            <CurrentPlan subscription={subscription} headingId={ids.current} onCancel={() => setDialog({ kind: 'cancel' })} />
            <PendingChange
              subscription={subscription}
              headingId={ids.pending}
              pending={pendingAction.pending}
              onCancelPending={() =>
                void pendingAction.run(async () => {
                  await cancelPending();
                  toast.positive(t('pending.cancelled'));
                })
              }
            />
          </div>
          <FormAlert>{pendingAction.error}</FormAlert>

          <section aria-labelledby={ids.plans}>
            <h3 id={ids.plans}>{t('plans.title')}</h3>
            <ul className={cardStyles.grid}>
              {plans.map((plan) => (
                <li key={plan.planType}>
                  <PlanCard
                    plan={plan}
                    vatRate={vatRate}
                    vat={vat}
                    choice={planChoice(plan, subscription)}
                    endDate={subscription.data.endDate}
                    onChoose={onChoose}
                    upgradeBlocked={savingBillingInfo}
                  />
                </li>
              ))}
            </ul>
          </section>

          <BillingInfoPanel
            billingInfo={billingInfo ?? null}
            headingId={ids.billing}
            editing={editingBilling}
            intent={billingIntent}
            onEdit={() => setEditingBilling(true)}
            onDone={() => {
              setEditingBilling(false);
              // Saved on the way to an upgrade: go on to its checkout at once.
              if (billingIntent) {
                setBillingIntent(null);
                setDialog({ kind: 'checkout', plan: billingIntent });
              }
            }}
            onCancel={() => {
              setEditingBilling(false);
              setBillingIntent(null);
            }}
          />
          <InvoiceList invoices={invoices} headingId={ids.invoices} />
        </div>
      )}

      {dialog?.kind === 'checkout' && (
        // The catalogue's copy of the plan: saving billing info reloads it with the buyer's
        // VAT while the checkout it led to is already open.
        <CheckoutDialog
          plan={plans.find((p) => p.planType === dialog.plan.planType) ?? dialog.plan}
          onClose={closeDialog}
          onEditBilling={() => askForBillingInfo(dialog.plan)}
        />
      )}
      {dialog?.kind === 'downgradeFree' && (
        <ConfirmDialog
          title={t('confirm.downgradeFree.title')}
          confirmLabel={t('confirm.downgradeFree.confirm')}
          cancelLabel={t('confirm.keep')}
          onConfirm={() => scheduleDowngrade(dialog.plan)}
          onClose={closeDialog}
        >
          <p className={styles.dialogText}>{t('confirm.downgradeFree.body')}</p>
          <p className={styles.dialogText}>{t('confirm.downgradeFree.when', { current: currentName, date: endDate })}</p>
        </ConfirmDialog>
      )}
      {dialog?.kind === 'downgradePaid' && (
        <ConfirmDialog
          title={t('confirm.downgradePaid.title', { plan: dialog.plan.name })}
          confirmLabel={t('confirm.downgradePaid.confirm', { plan: dialog.plan.name })}
          cancelLabel={t('confirm.keep')}
          onConfirm={() => scheduleDowngrade(dialog.plan)}
          onClose={closeDialog}
        >
          <p className={styles.dialogText}>{t('confirm.downgradePaid.body')}</p>
          <p className={styles.dialogText}>
            {t('confirm.downgradePaid.when', {
              current: currentName,
              plan: dialog.plan.name,
              date: endDate,
              price: renewalPrice(dialog.plan),
            })}
          </p>
        </ConfirmDialog>
      )}
      {dialog?.kind === 'cancel' && (
        <ConfirmDialog
          title={t('confirm.cancel.title')}
          confirmLabel={t('confirm.cancel.confirm')}
          cancelLabel={t('confirm.keep')}
          onConfirm={async () => {
            await cancel();
            toast.positive(t('done.cancelled', { date: endDate }));
          }}
          onClose={closeDialog}
        >
          <p className={styles.dialogText}>{t('confirm.cancel.body', { current: currentName, date: endDate })}</p>
          <p className={styles.dialogText}>{t('confirm.cancel.loss')}</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
