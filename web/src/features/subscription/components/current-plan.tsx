import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import type { Subscription } from '@/types/generated';
import { formatDate } from '../utils/format';
import { canCancel } from '../utils/plan-change';
import { useLocale } from '@/hooks/use-locale';
import styles from './subscription-section.module.css';

/** The plan in effect: its end date and whether it renews, with the cancel button. */
export function CurrentPlan({
  subscription,
  headingId,
  onCancel,
}: {
  subscription: Subscription;
  headingId: string;
  onCancel: () => void;
}) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const { data, subscriptionPlan } = subscription;
  const date = data.endDate ? formatDate(data.endDate, locale) : null;

  let period: string;
  if (!date) period = t('current.free');
  else if (data.autoRenew) period = t('current.renews', { date });
  else if (data.billingCycle === 'one_time') period = t('current.oneTime', { date });
  else period = t('current.activeUntil', { date });

  return (
    <section className={[styles.panel, styles.currentPanel].join(' ')} aria-labelledby={headingId} data-testid="current-plan">
      <h3 id={headingId} className={styles.panelTitle}>
        {t('current.title')}
      </h3>
      <p className={styles.planName} data-plan={data.planType}>
        {t('current.plan', { plan: subscriptionPlan.name })}
      </p>
      <p className={styles.muted}>{period}</p>
      {canCancel(subscription) && (
        <div>
          <Button variant="secondary" onClick={onCancel}>
            {t('current.cancel')}
          </Button>
        </div>
      )}
    </section>
  );
}

/** SPEC §4: the scheduled change, its activation date, and taking it back. */
export function PendingChange({
  subscription,
  headingId,
  onCancelPending,
  pending,
}: {
  subscription: Subscription;
  headingId: string;
  onCancelPending: () => void;
  pending: boolean;
}) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const { pendingSubscription, pendingSubscriptionPlan, subscriptionPlan, data } = subscription;
  if (!pendingSubscription) return null;
  // Both dates are known for every scheduled change (the paid period's end, the request);
  // the contract only leaves room for them to be missing.
  const date = pendingSubscription.activationDate ? formatDate(pendingSubscription.activationDate, locale) : '';
  const current = subscriptionPlan.name;

  return (
    <section className={[styles.panel, styles.pendingPanel].join(' ')} aria-labelledby={headingId} data-testid="pending-change">
      <h3 id={headingId} className={styles.panelTitle}>
        {t('pending.title')}
      </h3>
      <p>
        {data.cancelAtPeriodEnd
          ? t('pending.cancel', { current, date })
          : t('pending.downgrade', { plan: pendingSubscriptionPlan?.name ?? pendingSubscription.planType, current, date })}
      </p>
      {pendingSubscription.requestedAt && (
        <p className={styles.muted}>{t('pending.requestedAt', { date: formatDate(pendingSubscription.requestedAt, locale) })}</p>
      )}
      <div>
        <Button variant="secondary" onClick={onCancelPending} loading={pending} data-testid="cancel-pending">
          {t('pending.cancelButton')}
        </Button>
      </div>
    </section>
  );
}
