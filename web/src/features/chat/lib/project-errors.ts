/** How a refused project call (REST) is shown: the server's words, and when a plan would help. */
import { errorMessage, isApiError } from '@/lib/api-client';
import { usePlanStore } from '../stores/plan-store';

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
  if (premium) void usePlanStore.getState().loadPlan();
  return { message, upgrade: premium };
}
