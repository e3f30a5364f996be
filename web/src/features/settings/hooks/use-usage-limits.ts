import { useCallback, useEffect, useRef, useState } from 'react';
import { useSocketEvent } from '@/hooks/use-chat-socket';
import type { LimitInfo } from '@/types/api';
import { settingsApi } from '../api/settings-api';

export type UsageStatus = 'loading' | 'ready' | 'error';

export interface UsageLimits {
  status: UsageStatus;
  limitInfo: LimitInfo | null;
  reload: () => void;
}

/**
 * The counters of GET /api/usage/limits, then kept live by `usage.updated` (and the
 * `ready` of every reconnect, which carries them too: frames missed while the socket was
 * down are not replayed).
 */
export function useUsageLimits(): UsageLimits {
  const [limitInfo, setLimitInfo] = useState<LimitInfo | null>(null);
  const [status, setStatus] = useState<UsageStatus>('loading');
  const [attempt, setAttempt] = useState(0);
  // Bumped by every frame: an HTTP answer older than the last frame is stale.
  const version = useRef(0);

  useEffect(() => {
    let active = true;
    const started = version.current;
    const current = () => active && version.current === started;
    settingsApi.getUsageLimits().then(
      (usage) => {
        if (!current()) return;
        setLimitInfo(usage.limitInfo);
        setStatus('ready');
      },
      () => {
        // The api-client toasted server and network failures; the section offers a retry.
        if (current()) setStatus('error');
      },
    );
    return () => {
      active = false;
    };
  }, [attempt]);

  const fromSocket = (next: LimitInfo) => {
    version.current += 1;
    setLimitInfo(next);
    setStatus('ready');
  };
  useSocketEvent('usage.updated', ({ limitInfo: next }) => fromSocket(next));
  useSocketEvent('ready', ({ usage }) => fromSocket(usage.limitInfo));

  const reload = useCallback(() => {
    setStatus('loading');
    setAttempt((n) => n + 1);
  }, []);

  return { status, limitInfo, reload };
}
