/** How a refused project call (REST) is shown: the server's words, and when a plan would help. */
import { useSubscriptionStore } from '@/features/subscription';
import { errorMessage, isApiError } from '@/lib/api-client';

export interface ProjectCallError {
  message: string;
  /** The plan lacks projects: "Upgrade plan" goes with the words. */
  upgrade: boolean;
}

/**
 * The server's words for a failure (null when the api-client already toasted it). A
 * `premium_required` also reads the plan again: this tab may have been told an older one.
 */
export function projectCallError(error: unknown): ProjectCallError | null {
  const message = errorMessage(error);
  if (!message) return null;
  const premium = isApiError(error) && error.code === 'premium_required';
  if (premium) void useSubscriptionStore.getState().loadSubscription().catch(() => undefined);
  return { message, upgrade: premium };
}
