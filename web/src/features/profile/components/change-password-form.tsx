import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { PasswordField } from '@/components/password-field';
import { toast } from '@/components/toast';
import { useAuthStore } from '@/features/auth';
import { useValidationText } from '@/hooks/use-validation-text';
import { errorMessage, isApiError } from '@/lib/api-client';
import { chatSocket } from '@/lib/socket';
import { profileApi } from '../api/profile-api';
import {
  validatePasswordChange,
  type PasswordChangeInput,
  type PasswordField as Field,
  type PasswordFormError,
} from '../lib/profile-validation';
import styles from './profile-page.module.css';
import { ProfileSection } from './profile-section';

const EMPTY: PasswordChangeInput = { currentPassword: '', newPassword: '', confirmPassword: '' };

/**
 * SPEC §5 "Profile". The server revokes every token on success, this tab's too, and
 * answers a fresh one: the call is wrapped in `deferRevocation` so the `session.revoked`
 * frame that may beat the answer waits for the new token instead of logging this tab out.
 */
export function ChangePasswordForm({ email }: { email: string }) {
  const { t } = useTranslation(['profile', 'validation']);
  const validationText = useValidationText();
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const [values, setValues] = useState<PasswordChangeInput>(EMPTY);
  const [submitted, setSubmitted] = useState(false);
  const [pending, setPending] = useState(false);
  const [formError, setFormError] = useState<string | null>(null);
  // `wrong_password` belongs next to the field it is about.
  const [currentPasswordError, setCurrentPasswordError] = useState<string | null>(null);

  const errors = submitted ? validatePasswordChange(values) : {};
  const errorText = (key: PasswordFormError | undefined) =>
    key === 'confirmPasswordRequired' ? t('password.confirmRequired') : validationText(key);

  const set = (field: Field) => (event: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [field]: event.target.value }));
    if (field === 'currentPassword') setCurrentPasswordError(null);
  };

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    setCurrentPasswordError(null);
    if (Object.keys(validatePasswordChange(values)).length > 0) {
      setFormError(t('validation:formInvalid'));
      return;
    }
    setFormError(null);
    setPending(true);
    try {
      await chatSocket.deferRevocation(
        profileApi.changePassword(values).then(({ token }) => {
          // If a sibling tab signed this one out meanwhile, replaceToken signs it in again
          // with the fresh token; then come back to this page.
          const signedOut = useAuthStore.getState().status === 'anonymous';
          useAuthStore.getState().replaceToken(token);
          if (signedOut) void navigate(pathname, { replace: true });
        }),
      );
      setValues(EMPTY);
      setSubmitted(false);
      toast.positive(t('password.changed'), { timeout: 3000 });
    } catch (caught) {
      const message = errorMessage(caught);
      if (isApiError(caught) && caught.code === 'wrong_password') setCurrentPasswordError(message);
      else setFormError(message);
    } finally {
      setPending(false);
    }
  };

  return (
    <ProfileSection title={t('password.title')}>
      <p className={styles.muted}>{t('password.intro')}</p>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        <FormAlert>{formError}</FormAlert>
        {/* For password managers: which account the new password belongs to. */}
        <input type="email" name="username" autoComplete="username" value={email} readOnly hidden />
        <PasswordField
          label={t('password.current')}
          autoComplete="current-password"
          required
          value={values.currentPassword}
          onChange={set('currentPassword')}
          error={currentPasswordError ?? errorText(errors.currentPassword)}
        />
        <PasswordField
          label={t('password.new')}
          autoComplete="new-password"
          required
          hint={t('password.newHint')}
          value={values.newPassword}
          onChange={set('newPassword')}
          error={errorText(errors.newPassword)}
        />
        <PasswordField
          label={t('password.confirm')}
          autoComplete="new-password"
          required
          value={values.confirmPassword}
          onChange={set('confirmPassword')}
          error={errorText(errors.confirmPassword)}
        />
        <div className={`${styles.actions} ${styles.actionsEnd}`}>
          <Button type="submit" loading={pending}>
            {t('password.submit')}
          </Button>
        </div>
      </form>
    </ProfileSection>
  );
}
