import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { useValidationText } from '@/hooks/use-validation-text';
import { errorMessage, isApiError } from '@/lib/api-client';
import type { BillingInfo, BillingType } from '@/types/generated';
import { MAX_BILLING_FIELD_CHARS } from '@/types/generated';
import type { BillingInfoInput } from '../api/types';
import { useSubscriptionStore } from '../stores/subscription-store';
import {
  billingFields,
  billingInputFrom,
  validateBillingInfo,
  type BillingErrors,
  type BillingField,
} from '../utils/billing-rules';
import { ChoiceGroup } from './choice-group';
import { CountrySelect } from './country-select';
import styles from './forms.module.css';

const AUTOCOMPLETE: Record<BillingField, string> = {
  name: 'name',
  companyName: 'organization',
  vatNumber: 'off',
  address: 'street-address',
  postalCode: 'postal-code',
  city: 'address-level2',
  country: 'country-name',
};

/** A refusal the server pinned on one of the shown fields (`field` in the error body). */
function serverFieldError(error: unknown, fields: BillingField[]) {
  if (!isApiError(error)) return null;
  const field = fields.find((name) => name === error.field);
  return field ? { field, message: error.message } : null;
}

export interface BillingFormProps {
  initial: BillingInfo | null | undefined;
  onSaved: (billingInfo: BillingInfo) => void;
  onCancel?: () => void;
  /** The label of the save button; "Save billing information" unless given. */
  submitLabel?: string;
}

/**
 * SPEC §5: every field is required before paying; companyName and vatNumber only for
 * company billing (the form shows them only then, and does not send them otherwise).
 */
export function BillingForm({ initial, onSaved, onCancel, submitLabel }: BillingFormProps) {
  const { t } = useTranslation(['subscription', 'common']);
  const validationText = useValidationText();
  const saveBillingInfo = useSubscriptionStore((s) => s.saveBillingInfo);
  const [form, setForm] = useState<BillingInfoInput>(() => billingInputFrom(initial));
  const [submitted, setSubmitted] = useState(false);
  const [pending, setPending] = useState(false);
  const [alert, setAlert] = useState<string | null>(null);
  // The server's verdict on one field (e.g. a control character), until that field changes.
  const [serverError, setServerError] = useState<{ field: BillingField; message: string } | null>(null);

  const errors: BillingErrors = submitted ? validateBillingInfo(form) : {};
  const fields = billingFields(form.billingType);

  const update = <K extends keyof BillingInfoInput>(key: K, value: BillingInfoInput[K]) => {
    setForm((current) => ({ ...current, [key]: value }));
    if (serverError?.field === key) setServerError(null);
  };

  const fieldError = (field: BillingField) => {
    const error = errors[field];
    if (error) return t(`billing.errors.${error}`, { field: t(`billing.fields.${field}`), max: MAX_BILLING_FIELD_CHARS });
    return serverError?.field === field ? serverError.message : undefined;
  };

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    setServerError(null);
    if (Object.keys(validateBillingInfo(form)).length > 0) {
      setAlert(validationText('formInvalid') ?? null);
      return;
    }
    setAlert(null);
    setPending(true);
    try {
      onSaved(await saveBillingInfo(form));
    } catch (error) {
      const onField = serverFieldError(error, fields);
      if (onField) setServerError(onField);
      else setAlert(errorMessage(error));
    } finally {
      setPending(false);
    }
  };

  return (
    <form className={styles.form} onSubmit={onSubmit} noValidate data-testid="billing-form" aria-label={t('billing.title')}>
      <FormAlert>{alert}</FormAlert>
      <ChoiceGroup<BillingType>
        legend={t('billing.type.legend')}
        value={form.billingType}
        inline
        choices={[
          { value: 'private', label: t('billing.type.private') },
          { value: 'company', label: t('billing.type.company') },
        ]}
        onChange={(billingType) => update('billingType', billingType)}
      />
      <p className={styles.note}>{t('billing.requiredNote')}</p>
      <div className={styles.fields}>
        {fields.map((field) =>
          field === 'country' ? (
            <CountrySelect
              key={field}
              label={t(`billing.fields.${field}`)}
              value={form.country}
              onChange={(code) => update('country', code)}
              error={fieldError(field)}
            />
          ) : (
          <TextField
            key={field}
            label={t(`billing.fields.${field}`)}
            autoComplete={AUTOCOMPLETE[field]}
            required
            maxLength={MAX_BILLING_FIELD_CHARS}
            value={form[field]}
            onChange={(event) => update(field, event.target.value)}
            error={fieldError(field)}
          />
          ),
        )}
      </div>
      <div className={styles.actions}>
        {onCancel && (
          <Button variant="secondary" onClick={onCancel} disabled={pending}>
            {t('common:actions.cancel')}
          </Button>
        )}
        <Button type="submit" loading={pending} data-testid="billing-save">
          {submitLabel ?? t('billing.save')}
        </Button>
      </div>
    </form>
  );
}
