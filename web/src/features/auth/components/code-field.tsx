import { useTranslation } from 'react-i18next';
import { TextField, type TextFieldProps } from '@/components/text-field';
import { CODE_DIGITS } from '@/types/generated';
import styles from './auth-form.module.css';

/** The 6-digit e-mailed code: numeric keyboard on phones, and one-time-code autofill. */
export function CodeField(props: Omit<TextFieldProps, 'onChange' | 'value'> & {
  value: string;
  onValueChange: (value: string) => void;
}) {
  const { t } = useTranslation('auth');
  const { onValueChange, ...rest } = props;
  return (
    <TextField
      className={styles.code}
      hint={t('verify.codeHint')}
      inputMode="numeric"
      autoComplete="one-time-code"
      maxLength={CODE_DIGITS}
      {...rest}
      // Pasted codes often carry spaces or dashes ("123 456"); keep the digits only.
      onChange={(e) => onValueChange(e.target.value.replace(/\D/g, '').slice(0, CODE_DIGITS))}
    />
  );
}
