import { SubscriptionSection } from '@/features/subscription';
import styles from './settings-page.module.css';

/**
 * `/settings#subscription`: the subscription feature's section (its own heading and
 * regions) inside a card like the other sections.
 */
export function SubscriptionSlot() {
  return (
    <div id="subscription" className={styles.card}>
      <SubscriptionSection />
    </div>
  );
}
