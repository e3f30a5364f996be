/** The subscription feature's public surface; its pages are in routes.ts. */
export { SubscriptionSection } from './components/subscription-section';
export {
  selectPlan,
  useSubscriptionStore,
  type LoadStatus,
  type SubscriptionStore,
} from './stores/subscription-store';
export { subscriptionFrames } from './stores/subscription-frames';
export { PlanSummary } from './components/plan-summary';
export { usePublicPlans } from './hooks/use-public-plans';
