import { useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '@/components/button';
import { Checkbox } from '@/components/checkbox';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { PasswordField } from '@/components/password-field';
import { TextField } from '@/components/text-field';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useValidationText } from '@/hooks/use-validation-text';
import {
  collectErrors,
  hasErrors,
  validateEmail,
  validateName,
  validatePassword,
  validatePasswordConfirmation,
  validatePrivacyAccepted,
} from '@/lib/validation';
import { useAuthDialogStore } from '../stores/auth-dialog-store';
import { useAuthStore } from '../stores/auth-store';
import styles from './auth-form.module.css';

interface RegisterForm {
  name: string;
  email: string;
  password: string;
  confirmPassword: string;
  privacyAccepted: boolean;
}

const EMPTY: RegisterForm = { name: '', email: '', password: '', confirmPassword: '', privacyAccepted: false };

function validate(form: RegisterForm) {
  return collectErrors({
    name: validateName(form.name),
    email: validateEmail(form.email),
    password: validatePassword(form.password),
    confirmPassword: validatePasswordConfirmation(form.password, form.confirmPassword),
    privacyAccepted: validatePrivacyAccepted(form.privacyAccepted),
  });
}

export function RegisterDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation('auth');
  const validationText = useValidationText();
  const register = useAuthStore((s) => s.register);
  const openDialog = useAuthDialogStore((s) => s.open);
  const action = useAsyncAction();
  const [form, setForm] = useState<RegisterForm>(EMPTY);
  const [submitted, setSubmitted] = useState(false);

  const errors = submitted ? validate(form) : {};
  const update = <K extends keyof RegisterForm>(key: K, value: RegisterForm[K]) =>
    setForm((current) => ({ ...current, [key]: value }));

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (hasErrors(validate(form))) {
      action.setError(validationText('formInvalid') ?? null);
      return;
    }
    const sent = await action.run(() => register(form));
    if (sent) openDialog('verify');
  };

  return (
    <Dialog open onClose={onClose} title={t('register.title')}>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        <FormAlert>{action.error}</FormAlert>
        <TextField
          label={t('register.name')}
          autoComplete="name"
          autoFocus
          value={form.name}
          onChange={(e) => update('name', e.target.value)}
          error={validationText(errors.name)}
        />
        <TextField
          label={t('register.email')}
          type="email"
          autoComplete="email"
          inputMode="email"
          value={form.email}
          onChange={(e) => update('email', e.target.value)}
          error={validationText(errors.email)}
        />
        <PasswordField
          label={t('register.password')}
          autoComplete="new-password"
          value={form.password}
          onChange={(e) => update('password', e.target.value)}
          error={validationText(errors.password)}
        />
        <PasswordField
          label={t('register.confirmPassword')}
          autoComplete="new-password"
          value={form.confirmPassword}
          onChange={(e) => update('confirmPassword', e.target.value)}
          error={validationText(errors.confirmPassword)}
        />
        <Checkbox
          label={
            <Trans
              t={t}
              i18nKey="register.privacyAccept"
              components={{
                // A new tab keeps what was typed here. (Not named `link`: Trans reads that
                // as the void HTML element and drops the words inside it.)
                policyLink: <Link to="/privacy-policy" target="_blank" rel="noopener" />,
              }}
            />
          }
          checked={form.privacyAccepted}
          onChange={(e) => update('privacyAccepted', e.target.checked)}
          error={validationText(errors.privacyAccepted)}
        />
        <p className={styles.small}>{t('register.ageNotice')}</p>
        <Button type="submit" block loading={action.pending}>
          {t('register.submit')}
        </Button>
        <p className={styles.switch}>
          {t('register.haveAccount')}{' '}
          <Button variant="link" onClick={() => openDialog('login')}>
            {t('register.toLogin')}
          </Button>
        </p>
      </form>
    </Dialog>
  );
}
