import { useCallback, useState } from 'react';
import { errorMessage } from '@/lib/api-client';

export interface AsyncAction {
  pending: boolean;
  /** The inline message of the last failure, or null. */
  error: string | null;
  setError: (error: string | null) => void;
  /**
   * Runs `action`, tracking `pending`; a failure becomes `error` (the server's message,
   * else `fallback`; nothing for failures the api-client already toasted). Resolves to
   * whether it succeeded, so callers can chain the next step.
   */
  run: (action: () => Promise<void>, fallback?: string) => Promise<boolean>;
}

export function useAsyncAction(): AsyncAction {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<void>, fallback?: string) => {
    setPending(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(errorMessage(caught, fallback));
      return false;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, setError, run };
}
