import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { PasswordField } from '@/components/password-field';
import { toast } from '@/components/toast';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useValidationText } from '@/hooks/use-validation-text';
import {
  collectErrors,
  hasErrors,
  validateCode,
  validateNewPassword,
  validatePasswordConfirmation,
} from '@/lib/validation';
import { useAuthDialogStore } from '../stores/auth-dialog-store';
import { useAuthStore } from '../stores/auth-store';
import styles from './auth-form.module.css';
import { CodeField } from './code-field';

interface ResetForm {
  code: string;
  newPassword: string;
  confirmPassword: string;
}

/**
 * Code and new password on one screen (SPEC §2). The code is exchanged first for the
 * single-use reset token; if only the password step then fails, a second submit does not
 * verify the code again (its token is already spent).
 */
export function ResetPasswordDialog({
  email,
  codeVerified,
  onClose,
}: {
  email: string;
  codeVerified: boolean;
  onClose: () => void;
}) {
  const { t } = useTranslation('auth');
  const validationText = useValidationText();
  const verifyResetCode = useAuthStore((s) => s.verifyResetCode);
  const resetPassword = useAuthStore((s) => s.resetPassword);
  const openDialog = useAuthDialogStore((s) => s.open);
  const action = useAsyncAction();
  const [form, setForm] = useState<ResetForm>({ code: '', newPassword: '', confirmPassword: '' });
  const [submitted, setSubmitted] = useState(false);

  const validate = (values: ResetForm) =>
    collectErrors({
      code: codeVerified ? null : validateCode(values.code),
      newPassword: validateNewPassword(values.newPassword),
      confirmPassword: validatePasswordConfirmation(values.newPassword, values.confirmPassword),
    });
  const errors = submitted ? validate(form) : {};

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (hasErrors(validate(form))) {
      action.setError(validationText('formInvalid') ?? null);
      return;
    }
    await action.run(async () => {
      if (!codeVerified) await verifyResetCode(form.code);
      await resetPassword(form.newPassword, form.confirmPassword);
      toast.positive(t('reset.success'));
      openDialog('login');
    });
  };

  return (
    <Dialog open onClose={onClose} title={t('reset.title')}>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        <p className={styles.intro}>{t('reset.intro', { email })}</p>
        <FormAlert>{action.error}</FormAlert>
        <CodeField
          label={t('reset.code')}
          autoFocus={!codeVerified}
          disabled={codeVerified}
          value={form.code}
          onValueChange={(code) => setForm((f) => ({ ...f, code }))}
          error={validationText(errors.code)}
        />
        <PasswordField
          label={t('reset.newPassword')}
          autoComplete="new-password"
          value={form.newPassword}
          onChange={(e) => setForm((f) => ({ ...f, newPassword: e.target.value }))}
          error={validationText(errors.newPassword)}
        />
        <PasswordField
          label={t('reset.confirmPassword')}
          autoComplete="new-password"
          value={form.confirmPassword}
          onChange={(e) => setForm((f) => ({ ...f, confirmPassword: e.target.value }))}
          error={validationText(errors.confirmPassword)}
        />
        <Button type="submit" block loading={action.pending}>
          {t('reset.submit')}
        </Button>
        <p className={styles.switch}>
          <Button variant="link" onClick={() => openDialog('forgot')}>
            {t('reset.startOver')}
          </Button>
        </p>
      </form>
    </Dialog>
  );
}
