import { useId, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import fieldStyles from '@/components/field.module.css';
import { countryOptions } from '../utils/countries';
import { useLocale } from '@/hooks/use-locale';

export interface CountrySelectProps {
  label: string;
  value: string;
  onChange: (code: string) => void;
  error?: string | undefined;
}

/** The billing country as an ISO code, chosen by name (the server's VAT needs the code). */
export function CountrySelect({ label, value, onChange, error }: CountrySelectProps) {
  const { t } = useTranslation('subscription');
  const locale = useLocale();
  const id = useId();
  const errorId = error ? `${id}-error` : undefined;
  const options = useMemo(() => countryOptions(locale), [locale]);
  return (
    <div className={fieldStyles.field}>
      <label htmlFor={id} className={fieldStyles.label}>
        {label}
      </label>
      <div className={fieldStyles.control}>
        <select
          id={id}
          className={fieldStyles.input}
          required
          autoComplete="country"
          value={value}
          aria-invalid={error ? true : undefined}
          aria-describedby={errorId}
          onChange={(event) => onChange(event.target.value)}
        >
          <option value="">{t('billing.chooseCountry')}</option>
          {options.map(({ code, name }) => (
            <option key={code} value={code}>
              {name}
            </option>
          ))}
        </select>
      </div>
      {error && (
        <span id={errorId} className={fieldStyles.error}>
          {error}
        </span>
      )}
    </div>
  );
}
