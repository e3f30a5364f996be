import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useValidationText } from '@/hooks/use-validation-text';
import { validateEmail } from '@/lib/validation';
import { useAuthDialogStore } from '../stores/auth-dialog-store';
import { useAuthStore } from '../stores/auth-store';
import styles from './auth-form.module.css';

export function ForgotPasswordDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation('auth');
  const validationText = useValidationText();
  const forgot = useAuthStore((s) => s.forgot);
  const openDialog = useAuthDialogStore((s) => s.open);
  const action = useAsyncAction();
  const [email, setEmail] = useState('');
  const [submitted, setSubmitted] = useState(false);

  const emailError = submitted ? validateEmail(email) : null;

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (validateEmail(email)) return;
    const sent = await action.run(() => forgot(email));
    if (sent) openDialog('reset');
  };

  return (
    <Dialog open onClose={onClose} title={t('forgot.title')}>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        <p className={styles.intro}>{t('forgot.intro')}</p>
        <FormAlert>{action.error}</FormAlert>
        <TextField
          label={t('forgot.email')}
          type="email"
          autoComplete="email"
          inputMode="email"
          autoFocus
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={validationText(emailError)}
        />
        <Button type="submit" block loading={action.pending}>
          {t('forgot.submit')}
        </Button>
        <p className={styles.switch}>
          <Button variant="link" onClick={() => openDialog('login')}>
            {t('forgot.backToLogin')}
          </Button>
        </p>
      </form>
    </Dialog>
  );
}
