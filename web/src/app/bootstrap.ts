/**
 * Start-up wiring between lib code and features: lib must not import features, so the
 * app connects them here, once, before the first render.
 */
import { useAuthStore } from '@/features/auth';
import { resetChatStores, startAnswerNotifications } from '@/features/chat';
import { useProjectStore } from '@/features/projects';
import { initAppearance } from '@/features/settings';
import { useSubscriptionStore } from '@/features/subscription';
import { setUnauthorizedHandler } from '@/lib/api-client';
import { detectLanguage, setLanguage } from '@/lib/i18n';
import { chatSocket } from '@/lib/socket';
import { onTokenChangeInOtherTab } from '@/lib/token';
import { startSocketRouter } from './socket-router';

let started = false;

export function startApp(): void {
  if (started) return;
  started = true;
  const auth = () => useAuthStore.getState();

  initAppearance();
  // A finished answer may be announced by a browser notification while the app is hidden.
  startAnswerNotifications();
  // The browser's language first; the user's saved one replaces it once logged in.
  void setLanguage(detectLanguage());

  // SPEC §8: a 401 clears the token (done by the api-client) and opens the login dialog;
  // a suspended account's calls say why.
  setUnauthorizedHandler((error) =>
    error.code === 'account_suspended' ? auth().endSession('account_suspended') : auth().expireSession(),
  );
  // A login or logout in another tab reaches this one.
  onTokenChangeInOtherTab((token) => auth().syncFromOtherTab(token));

  // Every frame the socket brings reaches the slices that own it, on every page (the
  // session and settings, the subscription and counters, the chat, the projects).
  startSocketRouter();
  // A change of user (logout, another login) empties the previous one's chat and projects.
  let userId = auth().user?._id ?? null;
  useAuthStore.subscribe((state) => {
    const next = state.user?._id ?? null;
    if (next === userId) return;
    const previous = userId;
    userId = next;
    if (previous === null) return;
    resetChatStores();
    useProjectStore.getState().reset();
  });
  // SPEC §4: a login (or a start-up with a stored session) loads the subscription, once
  // per signed-in user.
  let subscriptionLoadedFor: string | null = null;
  const loadSubscriptionOnce = () => {
    const { status, user } = auth();
    if (status !== 'authenticated' || !user) {
      if (status === 'anonymous') subscriptionLoadedFor = null;
      return;
    }
    if (subscriptionLoadedFor === user._id) return;
    subscriptionLoadedFor = user._id;
    // Server and network failures were toasted; the screens that need it load it again.
    void useSubscriptionStore.getState().loadSubscription().catch(() => undefined);
  };
  useAuthStore.subscribe(loadSubscriptionOnce);

  // The socket follows the session: open while signed in (with the current token), closed otherwise.
  useAuthStore.subscribe((state, previous) => {
    if (state.status === previous.status && state.token === previous.token) return;
    if (state.status === 'authenticated') chatSocket.start();
    else if (state.status === 'anonymous') chatSocket.stop();
  });

  void auth().init();
}
