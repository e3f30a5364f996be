import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { PLAN_FEATURES, PLAN_LIMITS, type Plan, type PlanLimit } from '../api/types';
import { formatDate, formatNumber } from '../utils/format';
import type { PlanChoice } from '../utils/plan-change';
import { useLocale } from '../utils/use-locale';
import styles from './plan-card.module.css';
import { PlanPrice } from './plan-price';

export interface PlanCardProps {
  plan: Plan;
  vatRate: number;
  choice: PlanChoice;
  /** The end of the current period: when a scheduled change starts. */
  endDate: string | null;
  onChoose: (plan: Plan, choice: PlanChoice) => void;
  /** Upgrades wait while billing info is being saved, so they see it. */
  upgradeBlocked?: boolean;
}

export function PlanCard({ plan, vatRate, choice, endDate, onChoose, upgradeBlocked = false }: PlanCardProps) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const titleId = useId();
  const hintId = useId();
  const date = endDate ? formatDate(endDate, locale) : '';
  const current = choice === 'current';

  const limitText = ({ daily, monthly }: PlanLimit) => {
    if (daily === null && monthly === null) return t('plans.limit.unlimited');
    if (daily === 0 || monthly === 0) return t('plans.limit.none');
    return [
      daily !== null && t('plans.limit.perDay', { count: formatNumber(daily, locale) }),
      monthly !== null && t('plans.limit.perMonth', { count: formatNumber(monthly, locale) }),
    ]
      .filter(Boolean)
      .join(' · ');
  };

  const button = {
    current: { label: t('plans.choose.current'), disabled: true },
    scheduled: { label: t('plans.choose.scheduled', { date }), disabled: true },
    upgrade: { label: t('plans.choose.upgrade', { plan: plan.name }), disabled: upgradeBlocked },
    downgradeFree: { label: t('plans.choose.downgrade', { plan: plan.name }), disabled: false },
    downgradePaid: { label: t('plans.choose.downgrade', { plan: plan.name }), disabled: false },
    notRenewing: { label: t('plans.choose.notRenewing', { plan: plan.name }), disabled: true },
  }[choice];

  return (
    <article
      className={[styles.card, current && styles.current].filter(Boolean).join(' ')}
      aria-labelledby={titleId}
      data-testid={`plan-card-${plan.planType}`}
      data-current={current || undefined}
    >
      <header className={styles.header}>
        <h4 id={titleId} className={styles.name}>
          {plan.name}
        </h4>
        {current && <span className={styles.badge}>{t('plans.current')}</span>}
        {choice === 'scheduled' && <span className={[styles.badge, styles.badgeMuted].join(' ')}>{t('plans.scheduled')}</span>}
      </header>

      <PlanPrice plan={plan} vatRate={vatRate} />

      <ul className={styles.features} aria-label={t('plans.features')}>
        {PLAN_FEATURES.map((feature) => {
          const included = plan.features[feature];
          return (
            <li key={feature} className={included ? styles.included : styles.excluded}>
              <span aria-hidden="true" className={styles.mark}>
                {included ? '✓' : '–'}
              </span>
              <span className="visually-hidden">{included ? t('plans.included') : t('plans.notIncluded')}: </span>
              {t(`plans.feature.${feature}`)}
            </li>
          );
        })}
      </ul>

      <dl className={styles.limits} aria-label={t('plans.limitsTitle')}>
        {PLAN_LIMITS.map((limit) => (
          <div key={limit} className={styles.limitRow}>
            <dt>{t(`plans.limit.${limit}`)}</dt>
            <dd>{limitText(plan.limits[limit])}</dd>
          </div>
        ))}
      </dl>
      <p className={styles.small}>{t('plans.imagesPerMessage', { count: plan.maxImagesPerMessage })}</p>
      <p className={styles.small}>{t('plans.models', { models: plan.chatModels.join(', ') })}</p>

      <div className={styles.footer}>
        <Button
          block
          variant={choice === 'upgrade' ? 'primary' : 'secondary'}
          disabled={button.disabled}
          aria-describedby={choice === 'notRenewing' ? hintId : undefined}
          onClick={() => onChoose(plan, choice)}
          data-testid={`choose-plan-${plan.planType}`}
        >
          {button.label}
        </Button>
        {choice === 'notRenewing' && (
          <p id={hintId} className={styles.small}>
            {t('plans.choose.notRenewingHint', { date })}
          </p>
        )}
      </div>
    </article>
  );
}
