/** The subscription feature's public surface; its pages are in routes.ts. */
export { SubscriptionSection } from './components/subscription-section';
export { useSubscriptionStore, type SubscriptionStore } from './stores/subscription-store';
export type { Payment, Plan, PlanType, SubscriptionState } from './api/types';
export { PlanSummary } from './components/plan-summary';
export { usePublicPlans } from './hooks/use-public-plans';
