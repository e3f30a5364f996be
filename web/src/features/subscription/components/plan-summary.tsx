import { useTranslation } from 'react-i18next';
import type { Limit, Plan } from '@/types/generated';
import { PLAN_FEATURES } from '../api/types';
import { formatNumber } from '../utils/format';
import { useLocale } from '@/hooks/use-locale';
import styles from './plan-card.module.css';

/**
 * What a plan gives, from the catalogue: messages, models, the features that work, and
 * the plan's features that do not work yet, marked as coming soon (web/README.md).
 */
export function PlanSummary({ plan }: { plan: Plan }) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const messages = ({ daily, monthly }: Limit) =>
    daily === null && monthly === null
      ? t('plans.summary.unlimited')
      : [
          daily !== null && t('plans.summary.perDay', { count: formatNumber(daily, locale) }),
          monthly !== null && t('plans.summary.perMonth', { count: formatNumber(monthly, locale) }),
        ]
          .filter(Boolean)
          .join(', ');
  const included = PLAN_FEATURES.filter((feature) => plan.features[feature]);
  const working = included.filter((feature) => plan.available[feature]);
  const comingSoon = included.filter((feature) => !plan.available[feature]);
  return (
    <div data-testid={`plan-summary-${plan.planType}`}>
      <ul>
        <li>{messages(plan.limits.responseLimit)}</li>
        <li>{t('plans.models', { models: plan.chatModels.join(', ') })}</li>
        {working.map((feature) => (
          <li key={feature}>{t(`plans.feature.${feature}`)}</li>
        ))}
      </ul>
      {comingSoon.length > 0 && (
        <p className={styles.small}>
          {t('plans.comingSoon')} {comingSoon.map((feature) => t(`plans.feature.${feature}`)).join(', ')}
        </p>
      )}
    </div>
  );
}
