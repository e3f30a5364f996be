/**
 * The frames about the subscription and the usage counters, for the app's socket router
 * (on every page, for the tab's life, so every screen reads them current, whichever was
 * open when a frame came). `ready` carries the counters; after a reconnect,
 * `subscription.updated` may have been missed, so a subscription already loaded is read
 * again.
 */
import type { SliceFrames } from '@/lib/socket-protocol';
import { useSubscriptionStore } from './subscription-store';

const store = () => useSubscriptionStore.getState();

export const subscriptionFrames: SliceFrames<'ready' | 'usage.updated' | 'subscription.updated'> = {
  ready: ({ usage }, { reconnect }) => {
    store().applyUsage(usage);
    if (reconnect && store().subscriptionStatus !== 'idle') void store().loadSubscription().catch(() => undefined);
  },
  'usage.updated': (usage) => store().applyUsage(usage),
  'subscription.updated': ({ subscription }) => store().applySubscription(subscription),
};
