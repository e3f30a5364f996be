import { toast } from '@/components/toast';
import { errorMessage } from '@/lib/api-client';
import { useChatStore } from './chat';

/**
 * Pins, unpins, archives or unarchives from a menu or the archived view: a refusal is
 * toasted in the user's language (the server's words) and the row stays as it was.
 * Resolves to whether it was done.
 */
export function patchConversation(id: string, patch: { pinned?: boolean; archived?: boolean }): Promise<boolean> {
  return useChatStore
    .getState()
    .update(id, patch)
    .then(() => true)
    .catch((error: unknown) => {
      const message = errorMessage(error);
      if (message) toast.negative(message);
      return false;
    });
}
