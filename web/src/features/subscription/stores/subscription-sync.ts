/**
 * Feeds the frames about the subscription and the usage counters into the store. Started
 * once at start-up (src/app/bootstrap.ts) and kept for the tab's life, so every screen
 * reads them current, whichever was open when a frame came.
 */
import { useAuthStore } from '@/features/auth';
import { chatSocket } from '@/lib/socket';
import { useSubscriptionStore } from './subscription-store';

let started = false;

export function startSubscriptionSync(): void {
  if (started) return;
  started = true;
  const store = () => useSubscriptionStore.getState();

  // The first `ready` of a session follows the login's own loads, which missed nothing;
  // every later one is a reconnect, and `subscription.updated` may have been missed.
  let connected = chatSocket.status === 'open';
  chatSocket.on('ready', ({ usage }) => {
    store().applyUsage(usage);
    if (!connected) {
      connected = true;
      return;
    }
    if (store().subscriptionStatus !== 'idle') void store().loadSubscription().catch(() => undefined);
  });
  chatSocket.on('usage.updated', (usage) => store().applyUsage(usage));
  chatSocket.on('subscription.updated', ({ subscription }) => store().applySubscription(subscription));

  useAuthStore.subscribe((state, previous) => {
    if (state.user?._id !== previous.user?._id) connected = false;
  });
}
