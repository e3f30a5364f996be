import { useTranslation } from 'react-i18next';
import type { Currency, Plan, VatEstimate } from '@/types/generated';
import { defaultCurrency, formatMoney, formatPercent } from '../utils/format';
import { useLocale } from '@/hooks/use-locale';
import { vatLabel } from '../utils/vat';
import styles from './plan-card.module.css';

/**
 * SPEC §9: the net monthly price in EUR and in HUF, with the VAT this buyer pays shown
 * apart (the server computes it from their billing info). The language's own currency
 * comes first (HUF for hu-HU).
 */
export function PlanPrice({ plan, vatRate, vat = null }: { plan: Plan; vatRate: number; vat?: VatEstimate | null }) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const currencies: [Currency, Currency] = defaultCurrency(locale) === 'HUF' ? ['HUF', 'EUR'] : ['EUR', 'HUF'];
  const [main, other] = currencies;
  const free = currencies.every((currency) => plan.prices[currency].net === 0);
  return (
    <div className={styles.price}>
      <p className={styles.priceMain}>
        <span className={styles.amount}>{formatMoney(plan.prices[main].net, main, locale)}</span>{' '}
        <span className={styles.unit}>{t('plans.perMonthNet')}</span>
      </p>
      <p className={styles.priceOther}>
        {formatMoney(plan.prices[other].net, other, locale)} {t('plans.perMonthNet')}
      </p>
      <p className={styles.vat}>
        {free
          ? t('plans.noPayment')
          : vat && vat.treatment !== 'standard'
            ? vatLabel(vat, locale, t)
            : t('plans.vat', {
              rate: formatPercent(vatRate, locale),
              amounts: currencies.map((currency) => formatMoney(plan.prices[currency].vat, currency, locale)).join(' · '),
            })}
      </p>
    </div>
  );
}
