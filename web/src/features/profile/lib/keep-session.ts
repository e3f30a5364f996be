/**
 * Keeps this tab signed in after its own password change, when another tab of the same
 * browser got in the way.
 *
 * Tabs of one browser share one stored token. The server sends `session.revoked` to every
 * tab before the changing tab has its HTTP answer; a sibling tab that handles the frame
 * first still finds the old token, ends its session and clears the shared token, and this
 * tab then follows that "logout" through the storage event, although it holds (or is
 * about to store) the fresh token. `deferRevocation` cannot help there: it only guards
 * this tab's own socket.
 *
 * So, for a short while after the change: whenever this tab is signed out while the
 * stored token is still the fresh one, it signs in again with it (`init` loads the profile
 * with the stored token; the sibling tabs follow through the storage event as well). A
 * deliberate logout clears the stored token, and is left alone.
 */
import { useAuthStore } from '@/features/auth';
import { getToken } from '@/lib/token';

export const KEEP_SESSION_MS = 5000;

export function keepSessionAfterPasswordChange(
  freshToken: string,
  onRestored?: () => void,
  windowMs: number = KEEP_SESSION_MS,
): () => void {
  let restoring = false;
  const check = () => {
    const { status } = useAuthStore.getState();
    if (restoring || status !== 'anonymous' || getToken() !== freshToken) return;
    restoring = true;
    void useAuthStore
      .getState()
      .init()
      .then(() => {
        restoring = false;
        if (useAuthStore.getState().status === 'authenticated') onRestored?.();
      });
  };
  const unsubscribe = useAuthStore.subscribe(check);
  const timer = setTimeout(unsubscribe, windowMs);
  check();
  return () => {
    clearTimeout(timer);
    unsubscribe();
  };
}
