import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { Spinner } from '@/components/spinner';
import { useSubscriptionStore } from '@/features/subscription';
import { currentLanguage } from '@/lib/i18n';
import type { PlanType, UsageCounter } from '@/types/generated';
import styles from './settings-page.module.css';
import { SettingsSection } from './settings-section';

const USAGE_SERVICES = ['responses', 'searches', 'images'] as const;
const USAGE_PERIODS = ['daily', 'monthly'] as const;
type Service = (typeof USAGE_SERVICES)[number];
type Period = (typeof USAGE_PERIODS)[number];

const PLANS: readonly PlanType[] = ['free', 'base', 'plus', 'pro'];

const loadUsage = () => void useSubscriptionStore.getState().loadUsage();

/**
 * Daily and monthly counters of responses, searches and images: read fresh when the page
 * opens, then kept live by `usage.updated` and every reconnect's `ready` (the
 * subscription feature's store, which the chat's counter reads too).
 */
export function UsageSection() {
  const { t } = useTranslation(['settings', 'common']);
  const limitInfo = useSubscriptionStore((s) => s.usage?.limitInfo ?? null);
  const status = useSubscriptionStore((s) => s.usageStatus);
  const plan = limitInfo?.limitType;

  useEffect(loadUsage, []);

  return (
    <SettingsSection id="usage" title={t('usage.title')}>
      {!limitInfo && status !== 'error' && <Spinner />}
      {!limitInfo && status === 'error' && (
        <div className={styles.usageStatus}>
          <FormAlert>{t('usage.loadError')}</FormAlert>
          <Button variant="secondary" onClick={loadUsage}>
            {t('common:actions.retry')}
          </Button>
        </div>
      )}
      {limitInfo && (
        <>
          {plan && (
            <p className={styles.muted}>
              {t('usage.plan', { plan: PLANS.includes(plan) ? t(`usage.plans.${plan}`) : plan })}
            </p>
          )}
          <ul className={styles.services}>
            {USAGE_SERVICES.map((service) => (
              <li key={service} className={styles.service}>
                <h3>{t(`usage.services.${service}`)}</h3>
                {USAGE_PERIODS.map((period) => (
                  <UsageCounterView key={period} service={service} period={period} counter={limitInfo.services[service][period]} />
                ))}
              </li>
            ))}
          </ul>
        </>
      )}
    </SettingsSection>
  );
}

function UsageCounterView({ service, period, counter }: { service: Service; period: Period; counter: UsageCounter }) {
  const { t } = useTranslation('settings');
  const language = currentLanguage();
  const number = (value: number) => new Intl.NumberFormat(language).format(value);
  const { used, limit, remaining, unlimited } = counter;
  const limited = !unlimited && limit !== null;
  const notIncluded = limited && limit === 0;

  let value: string;
  let detail: string | null;
  if (!limited) {
    value = t('usage.used', { used: number(used) });
    detail = t('usage.unlimited');
  } else if (notIncluded) {
    value = t('usage.notIncluded');
    detail = null;
  } else {
    value = t('usage.usedOfLimit', { used: number(used), limit: number(limit) });
    detail = t('usage.remaining', { remaining: number(remaining ?? Math.max(0, limit - used)) });
  }
  const ratio = limited && limit > 0 ? Math.min(1, used / limit) : 0;
  // A service the plan does not include never resets into anything.
  const resetsAt = notIncluded ? null : formatDate(counter.resetsAt, language);

  return (
    <div
      className={styles.usageCounter}
      data-testid={`usage-${service}-${period}`}
      data-used={used}
      data-limit={limit ?? ''}
      data-remaining={remaining ?? ''}
      data-unlimited={unlimited}
    >
      <div className={styles.usageHead}>
        <span className={styles.usagePeriod}>{t(`usage.periods.${period}`)}</span>
        <span className={styles.usageValue}>{value}</span>
      </div>
      {limited && !notIncluded && (
        <div className={styles.bar} aria-hidden="true">
          <div
            className={[styles.barFill, ratio >= 1 && styles.barFull].filter(Boolean).join(' ')}
            style={{ width: `${ratio * 100}%` }}
          />
        </div>
      )}
      {(detail ?? resetsAt) && (
        <span className={styles.hint}>
          {[detail, resetsAt && t('usage.resets', { date: resetsAt })].filter(Boolean).join(' · ')}
        </span>
      )}
    </div>
  );
}

function formatDate(iso: string, language: string): string | null {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return null;
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}
