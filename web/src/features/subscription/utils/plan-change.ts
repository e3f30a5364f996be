/** What choosing a plan means, given the subscription (SPEC §4, docs/api.md plan change). */
import type { Plan, Subscription } from '@/types/generated';

export type PlanChoice =
  /** The plan in effect now. */
  | 'current'
  /** Already the scheduled change: nothing to choose. */
  | 'scheduled'
  /** A higher plan: paid now at the checkout, starts once paid. */
  | 'upgrade'
  /** Free, at the end of the period: loses unlimited messages, advanced models and exclusive features. */
  | 'downgradeFree'
  /** A lower paid plan, at the end of the period: lower limits, used quotas kept. */
  | 'downgradePaid'
  /** A lower paid plan while the current one does not renew: the server refuses it (plan_not_renewing). */
  | 'notRenewing';

export function planChoice(target: Plan, subscription: Subscription): PlanChoice {
  const current = subscription.subscriptionPlan;
  if (target.planType === current.planType) return 'current';
  if (subscription.pendingSubscription?.planType === target.planType) return 'scheduled';
  if (target.rank >= current.rank) return 'upgrade';
  if (target.planType === 'free') return 'downgradeFree';
  return subscription.data.billingCycle === 'monthly' ? 'downgradePaid' : 'notRenewing';
}

/** A paid plan that renews can be cancelled; a one-time one ends by itself. */
export function canCancel(subscription: Subscription): boolean {
  const { data } = subscription;
  return data.planType !== 'free' && data.billingCycle === 'monthly' && !data.cancelAtPeriodEnd;
}
