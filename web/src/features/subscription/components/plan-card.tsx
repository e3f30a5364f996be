import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import type { Limit, Plan, VatEstimate } from '@/types/generated';
import { PLAN_FEATURES, type PlanLimitName } from '../api/types';
import { formatDate, formatNumber } from '../utils/format';
import type { PlanChoice } from '../utils/plan-change';
import { useLocale } from '@/hooks/use-locale';
import styles from './plan-card.module.css';
import { PlanPrice } from './plan-price';

export interface PlanCardProps {
  plan: Plan;
  vatRate: number;
  /** The VAT this user pays; the rate alone when not known. */
  vat?: VatEstimate | null;
  choice: PlanChoice;
  /** The end of the current period: when a scheduled change starts. */
  endDate: string | null;
  onChoose: (plan: Plan, choice: PlanChoice) => void;
  /** Upgrades wait while billing info is being saved, so they see it. */
  upgradeBlocked?: boolean;
}

/**
 * The limits a card shows: a service's limit only once the service works (`available`
 * from the catalogue), so a card never sells what does not work yet (web/README.md).
 */
function shownLimits(plan: Plan): PlanLimitName[] {
  const { available } = plan;
  return [
    'responseLimit' as const,
    ...(available.openaiWebSearch || available.googleWebSearch ? (['webSearchLimit'] as const) : []),
    ...(available.imageGeneration ? (['imageGenerationLimit'] as const) : []),
  ];
}

export function PlanCard({ plan, vatRate, vat = null, choice, endDate, onChoose, upgradeBlocked = false }: PlanCardProps) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const titleId = useId();
  const hintId = useId();
  const date = endDate ? formatDate(endDate, locale) : '';
  const current = choice === 'current';
  const included = PLAN_FEATURES.filter((feature) => plan.features[feature]);
  const working = included.filter((feature) => plan.available[feature]);
  // Part of the plan but not working yet: never sold as included.
  const comingSoon = included.filter((feature) => !plan.available[feature]);

  const limitText = ({ daily, monthly }: Limit) => {
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

      <PlanPrice plan={plan} vatRate={vatRate} vat={vat} />

      <dl className={styles.limits} aria-label={t('plans.limitsTitle')}>
        {shownLimits(plan).map((limit) => (
          <div key={limit} className={styles.limitRow}>
            <dt>{t(`plans.limit.${limit}`)}</dt>
            <dd>{limitText(plan.limits[limit])}</dd>
          </div>
        ))}
      </dl>
      {working.length > 0 && (
        <ul className={styles.features} aria-label={t('plans.features')}>
          {working.map((feature) => (
            <li key={feature} className={styles.included}>
              <span aria-hidden="true" className={styles.mark}>
                ✓
              </span>
              {t(`plans.feature.${feature}`)}
            </li>
          ))}
        </ul>
      )}
      {plan.available.imageUpload && (
        <p className={styles.small}>{t('plans.imagesPerMessage', { count: plan.maxImagesPerMessage })}</p>
      )}
      <p className={styles.small}>{t('plans.models', { models: plan.chatModels.join(', ') })}</p>
      {comingSoon.length > 0 && (
        <div className={styles.comingSoon} data-testid={`coming-soon-${plan.planType}`}>
          <p className={styles.small}>{t('plans.comingSoon')}</p>
          <ul className={styles.comingSoonList}>
            {comingSoon.map((feature) => (
              <li key={feature}>{t(`plans.feature.${feature}`)}</li>
            ))}
          </ul>
        </div>
      )}

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
