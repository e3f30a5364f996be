import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { toast } from '@/components/toast';
import type { BillingInfo, Plan } from '@/types/generated';
import { useSubscriptionStore } from '../stores/subscription-store';
import { billingFields } from '../utils/billing-rules';
import { countryName } from '../utils/countries';
import { useLocale } from '@/hooks/use-locale';
import { vatLabel } from '../utils/vat';
import { BillingForm } from './billing-form';
import styles from './subscription-section.module.css';

export interface BillingInfoPanelProps {
  billingInfo: BillingInfo | null;
  headingId: string;
  editing: boolean;
  /** The upgrade that is waiting for billing info (SPEC §5: required before paying). */
  intent: Plan | null;
  onEdit: () => void;
  /** After a save; the section then opens the checkout of `intent`, if any. */
  onDone: () => void;
  onCancel: () => void;
}

/** The saved billing info, with the form to add or change it. */
export function BillingInfoPanel({
  billingInfo,
  headingId,
  editing,
  intent,
  onEdit,
  onDone,
  onCancel,
}: BillingInfoPanelProps) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const vat = useSubscriptionStore((s) => s.vat);
  const ref = useRef<HTMLElement>(null);

  // Sent here by choosing a plan: bring the form into view and put the cursor in it.
  useEffect(() => {
    if (!intent || !editing) return;
    ref.current?.scrollIntoView?.({ block: 'start', behavior: 'smooth' });
    ref.current?.querySelector<HTMLInputElement>('input[type="text"], input:not([type])')?.focus({ preventScroll: true });
  }, [intent, editing]);

  return (
    <section ref={ref} className={styles.panel} aria-labelledby={headingId}>
      <h3 id={headingId} className={styles.panelTitle}>
        {t('billing.title')}
      </h3>
      {editing ? (
        <>
          {intent && <FormAlert tone="info">{t('billing.requiredFor', { plan: intent.name })}</FormAlert>}
          <BillingForm
            initial={billingInfo}
            onCancel={onCancel}
            onSaved={() => {
              // On the way to an upgrade the checkout opens at once and names the saved
              // buyer; a toast would only show dimmed behind it.
              if (!intent) toast.positive(t('billing.saved'));
              onDone();
            }}
          />
        </>
      ) : (
        <>
          {billingInfo ? (
            <dl className={styles.details}>
              <div>
                <dt>{t('billing.type.legend')}</dt>
                <dd>{t(`billing.type.${billingInfo.billingType}`)}</dd>
              </div>
              {billingFields(billingInfo.billingType).map((field) => (
                <div key={field}>
                  <dt>{t(`billing.fields.${field}`)}</dt>
                  <dd>{field === 'country' ? countryName(billingInfo.country, locale) : billingInfo[field]}</dd>
                </div>
              ))}
              {vat?.basis === 'billingInfo' && (
                <div>
                  <dt>{t('billing.vat')}</dt>
                  <dd data-testid="billing-vat">{vatLabel(vat, locale, t)}</dd>
                </div>
              )}
            </dl>
          ) : (
            <p className={styles.muted}>{t('billing.none')}</p>
          )}
          {billingInfo?.vatCheck && (
            // Why this company is (or is not) reverse charged: VIES's word on its number.
            <div data-testid="billing-vat-check">
              <FormAlert tone="info">{t(`billing.vatCheck.${billingInfo.vatCheck.status}`)}</FormAlert>
            </div>
          )}
          <div className={styles.buttons}>
            <Button variant="secondary" onClick={onEdit}>
              {billingInfo ? t('billing.edit') : t('billing.add')}
            </Button>
          </div>
        </>
      )}
    </section>
  );
}
