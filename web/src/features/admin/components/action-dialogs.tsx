import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Checkbox } from '@/components/checkbox';
import { randomId } from '@/lib/random-id';
import { DEFAULT_PLAN_GRANT_DAYS, MAX_PLAN_GRANT_DAYS, type Payment, type PlanType } from '@/types/generated';
import { PLANS, RESET_SERVICES, type ResetService } from '../api/admin-api';
import { useAdminUserStore } from '../stores/admin-stores';
import { formatMoney, subtractMoney, useLocale } from '../utils/format';
import styles from './admin.module.css';
import { ReasonDialog } from './reason-dialog';

/** Puts the user on a plan with no payment: a paid plan for some days, `free` ends it at once. */
export function PlanDialog({ current, onClose }: { current: PlanType; onClose: () => void }) {
  const { t } = useTranslation('admin');
  const setPlan = useAdminUserStore((s) => s.setPlan);
  const [planType, setPlanType] = useState<PlanType>(current);
  const [days, setDays] = useState(String(DEFAULT_PLAN_GRANT_DAYS));
  const planId = useId();
  const daysId = useId();
  const paid = planType !== 'free';
  const daysNumber = Number(days);
  const daysValid = !paid || (Number.isInteger(daysNumber) && daysNumber >= 1 && daysNumber <= MAX_PLAN_GRANT_DAYS);

  return (
    <ReasonDialog
      title={t('actions.plan.title')}
      confirmLabel={t('actions.plan.confirm')}
      canSubmit={daysValid}
      testId="admin-plan-dialog"
      onClose={onClose}
      onConfirm={(reason) => setPlan(planType, paid ? daysNumber : undefined, reason)}
    >
      <p className={styles.note}>{t('actions.plan.text')}</p>
      <div className={styles.field}>
        <label htmlFor={planId} className={styles.label}>
          {t('actions.plan.plan')}
        </label>
        <select
          id={planId}
          className={styles.select}
          value={planType}
          onChange={(event) => setPlanType(event.target.value as PlanType)}
          data-testid="admin-plan-select"
        >
          {PLANS.map((plan) => (
            <option key={plan} value={plan}>
              {t(`plans.${plan}`)}
            </option>
          ))}
        </select>
      </div>
      {paid ? (
        <div className={styles.field}>
          <label htmlFor={daysId} className={styles.label}>
            {t('actions.plan.days')}
          </label>
          <input
            id={daysId}
            className={styles.input}
            type="number"
            inputMode="numeric"
            min={1}
            max={MAX_PLAN_GRANT_DAYS}
            step={1}
            value={days}
            aria-invalid={daysValid ? undefined : true}
            onChange={(event) => setDays(event.target.value)}
            data-testid="admin-plan-days"
          />
        </div>
      ) : (
        <p className={styles.note}>{t('actions.plan.freeNote')}</p>
      )}
    </ReasonDialog>
  );
}

/** Suspends or lets back in; says what happens to a paid Stripe subscription. */
export function SuspendDialog({ suspended, onClose }: { suspended: boolean; onClose: () => void }) {
  const { t } = useTranslation('admin');
  const setSuspended = useAdminUserStore((s) => s.setSuspended);
  const key = suspended ? 'unsuspend' : 'suspend';
  return (
    <ReasonDialog
      title={t(`actions.${key}.title`)}
      confirmLabel={t(`actions.${key}.confirm`)}
      danger={!suspended}
      testId="admin-suspend-dialog"
      onClose={onClose}
      onConfirm={(reason) => setSuspended(!suspended, reason)}
    >
      <p className={styles.note}>{t(`actions.${key}.text`)}</p>
      <p className={styles.note}>{t(`actions.${key}.stripe`)}</p>
    </ReasonDialog>
  );
}

/** Gives back today's count of one service. */
export function UsageResetDialog({ service: initial, onClose }: { service: ResetService; onClose: () => void }) {
  const { t } = useTranslation('admin');
  const resetUsage = useAdminUserStore((s) => s.resetUsage);
  const [service, setService] = useState<ResetService>(initial);
  const serviceId = useId();
  return (
    <ReasonDialog
      title={t('actions.usage.title')}
      confirmLabel={t('actions.usage.confirm')}
      testId="admin-usage-dialog"
      onClose={onClose}
      onConfirm={(reason) => resetUsage(service, reason)}
    >
      <p className={styles.note}>{t('actions.usage.text')}</p>
      <div className={styles.field}>
        <label htmlFor={serviceId} className={styles.label}>
          {t('actions.usage.service')}
        </label>
        <select
          id={serviceId}
          className={styles.select}
          value={service}
          onChange={(event) => setService(event.target.value as ResetService)}
          data-testid="admin-usage-service"
        >
          {RESET_SERVICES.map((value) => (
            <option key={value} value={value}>
              {t(`services.${value}`)}
            </option>
          ))}
        </select>
      </div>
    </ReasonDialog>
  );
}

/** What can still be given back: a major-unit amount with at most two decimals. */
function parseAmount(text: string): number | null {
  const normalized = text.trim().replace(',', '.');
  if (!/^\d+(\.\d{1,2})?$/.test(normalized)) return null;
  return Number(normalized);
}

/**
 * Refunds (part of) a payment. The Idempotency-Key is made once per opening of the
 * dialog, so a double click or a retry after a lost answer refunds once.
 */
export function RefundDialog({ payment, onClose }: { payment: Payment; onClose: () => void }) {
  const { t } = useTranslation('admin');
  const locale = useLocale();
  const refund = useAdminUserStore((s) => s.refund);
  const [idempotencyKey] = useState(randomId);
  const remaining = subtractMoney(payment.totalAmount, payment.refundedAmount);
  const [amount, setAmount] = useState(String(remaining));
  const [endPlan, setEndPlan] = useState(false);
  const amountId = useId();
  const hintId = useId();
  const parsed = parseAmount(amount);
  const valid = parsed !== null && parsed > 0 && parsed <= remaining;

  return (
    <ReasonDialog
      title={t('actions.refund.title')}
      confirmLabel={t('actions.refund.confirm')}
      danger
      canSubmit={valid}
      testId="admin-refund-dialog"
      onClose={onClose}
      // The amount is always sent, even the whole remainder: the admin refunds what they
      // saw, and a refund made meanwhile elsewhere makes it too large instead of smaller.
      onConfirm={(reason) => refund(payment._id, { amount: parsed ?? 0, reason, endPlan }, idempotencyKey)}
    >
      <p className={styles.note}>
        {t('actions.refund.text', {
          total: formatMoney(payment.totalAmount, payment.currency, locale),
          remaining: formatMoney(remaining, payment.currency, locale),
        })}
      </p>
      <div className={styles.field}>
        <label htmlFor={amountId} className={styles.label}>
          {t('actions.refund.amount', { currency: payment.currency })}
        </label>
        <input
          id={amountId}
          className={styles.input}
          inputMode="decimal"
          value={amount}
          aria-invalid={valid ? undefined : true}
          aria-describedby={hintId}
          onChange={(event) => setAmount(event.target.value)}
          data-testid="admin-refund-amount"
        />
        <span id={hintId} className={valid ? styles.hint : styles.error}>
          {t('actions.refund.amountHint', { remaining: formatMoney(remaining, payment.currency, locale) })}
        </span>
      </div>
      <Checkbox
        label={t('actions.refund.endPlan')}
        checked={endPlan}
        onChange={(event) => setEndPlan(event.target.checked)}
        data-testid="admin-refund-end-plan"
      />
    </ReasonDialog>
  );
}
