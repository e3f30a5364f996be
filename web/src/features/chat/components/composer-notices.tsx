import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '@/components/button';
import { buttonClassName } from '@/components/button-class-name';
import { CloseIcon } from '@/components/icons';
import { errorText } from '@/lib/error-codes';
import { normalizeLanguage } from '@/lib/i18n';
import type { Usage } from '@/types/generated';
import { exhaustedPeriod, offersUpgrade } from '../lib/gating';
import type { ChatError } from '../stores/chat';
import type { ComposerNoticeKind } from './composer';
import styles from './composer-notices.module.css';

/** Where "Upgrade plan" leads: the subscription section of the settings page. */
export const UPGRADE_PATH = '/settings#subscription';

export function UpgradeLink() {
  const { t } = useTranslation('chat');
  return (
    <Link to={UPGRADE_PATH} className={buttonClassName({ size: 'small' })} data-testid="upgrade-plan-link">
      {t('gating.upgradePlan')}
    </Link>
  );
}

function DismissButton({ onClick }: { onClick: () => void }) {
  const { t } = useTranslation('chat');
  return (
    <Button variant="ghost" size="small" iconOnly aria-label={t('errors.dismiss')} onClick={onClick}>
      <CloseIcon width={16} height={16} />
    </Button>
  );
}

/**
 * A refused send or failed answer, in the user's language: the server's message, else
 * (a client code, a frame without words) the text of its code.
 */
export function ChatErrorNotice({
  id,
  error,
  onDismiss,
  onRetry,
  retryDisabled = false,
}: {
  id: string;
  error: ChatError;
  onDismiss: () => void;
  /** Sends the refused message again; absent when a retry as it is cannot help. */
  onRetry?: (() => void) | undefined;
  /** An answer is still being written: the retry waits for it. */
  retryDisabled?: boolean;
}) {
  const { t, i18n } = useTranslation('chat');
  const text = error.message || errorText(error.code, {}, normalizeLanguage(i18n.language));
  return (
    <div id={id} className={`${styles.notice} ${styles.error}`} role="alert" data-testid="chat-error" data-code={error.code}>
      <p className={styles.text}>{text}</p>
      <div className={styles.actions}>
        {onRetry && (
          <Button size="small" disabled={retryDisabled} onClick={onRetry} data-testid="chat-error-retry">
            {t('actions.retry')}
          </Button>
        )}
        {offersUpgrade(error.code) && <UpgradeLink />}
        <DismissButton onClick={onDismiss} />
      </div>
    </div>
  );
}

/** The message of a gated control (SPEC §8), with the way to a bigger plan. */
export function GateNotice({ id, kind, onDismiss }: { id: string; kind: ComposerNoticeKind; onDismiss: () => void }) {
  const { t } = useTranslation('chat');
  return (
    <div id={id} className={styles.notice} role="status" data-testid="chat-notice" data-kind={kind}>
      <p className={styles.text}>{t(`gating.${kind}`)}</p>
      <div className={styles.actions}>
        {kind !== 'attachmentsComingSoon' && kind !== 'documentsComingSoon' && <UpgradeLink />}
        <DismissButton onClick={onDismiss} />
      </div>
    </div>
  );
}

/** Messages left today (or this month), and the limit message once none are left. */
export function UsageCounter({ usage }: { usage: Usage | null }) {
  const { t } = useTranslation('chat');
  const responses = usage?.limitInfo.services.responses;
  if (!responses) return null;
  const exhausted = exhaustedPeriod(responses);
  if (exhausted) {
    return (
      <div className={`${styles.usage} ${styles.usageExhausted}`} data-testid="usage-counter" data-exhausted="true">
        <span>{t(exhausted === 'day' ? 'usage.dailyLimitReached' : 'usage.monthlyLimitReached')}</span>
        <UpgradeLink />
      </div>
    );
  }
  const counter = !responses.daily.unlimited ? responses.daily : !responses.monthly.unlimited ? responses.monthly : null;
  if (!counter || counter.limit === null) return null;
  const key = counter === responses.daily ? 'usage.daily' : 'usage.monthly';
  return (
    <p className={styles.usage} data-testid="usage-counter">
      {t(key, { remaining: counter.remaining ?? 0, limit: counter.limit })}
    </p>
  );
}
