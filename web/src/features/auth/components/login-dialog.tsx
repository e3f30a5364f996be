import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { Checkbox } from '@/components/checkbox';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { PasswordField } from '@/components/password-field';
import { TextField } from '@/components/text-field';
import { toast } from '@/components/toast';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useValidationText } from '@/hooks/use-validation-text';
import { collectErrors, hasErrors, validateEmail, validateLoginPassword, type FieldErrors } from '@/lib/validation';
import { useAuthDialogStore } from '../stores/auth-dialog-store';
import { useAuthStore } from '../stores/auth-store';
import styles from './auth-form.module.css';

type Field = 'email' | 'password';

export function LoginDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation(['auth', 'errors']);
  const validationText = useValidationText();
  const login = useAuthStore((s) => s.login);
  const notice = useAuthDialogStore((s) => s.notice);
  const openDialog = useAuthDialogStore((s) => s.open);
  const clearNotice = useAuthDialogStore((s) => s.clearNotice);
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const action = useAsyncAction();

  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [rememberMe, setRememberMe] = useState(false);
  const [submitted, setSubmitted] = useState(false);

  const errors: FieldErrors<Field> = submitted
    ? collectErrors({ email: validateEmail(email), password: validateLoginPassword(password) })
    : {};

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    // "Your session has ended" above "Invalid email or password" would read as one story.
    clearNotice();
    if (hasErrors(collectErrors({ email: validateEmail(email), password: validateLoginPassword(password) }))) {
      action.setError(validationText('formInvalid') ?? null);
      return;
    }
    await action.run(async () => {
      const user = await login({ email, password, rememberMe });
      toast.positive(t('login.welcome', { name: user.name }), { timeout: 3000 });
      onClose();
      if (pathname === '/') await navigate('/chat');
    }, t('errors:invalidCredentials'));
  };

  return (
    <Dialog open onClose={onClose} title={t('login.title')}>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        {notice && <FormAlert tone="info">{notice}</FormAlert>}
        <FormAlert>{action.error}</FormAlert>
        <TextField
          label={t('login.email')}
          type="email"
          autoComplete="email"
          inputMode="email"
          autoFocus
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={validationText(errors.email)}
        />
        <PasswordField
          label={t('login.password')}
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={validationText(errors.password)}
        />
        <div className={styles.row}>
          <Checkbox
            label={t('login.rememberMe')}
            checked={rememberMe}
            onChange={(e) => setRememberMe(e.target.checked)}
          />
          <Button variant="link" onClick={() => openDialog('forgot')}>
            {t('login.forgotPassword')}
          </Button>
        </div>
        <Button type="submit" block loading={action.pending}>
          {t('login.submit')}
        </Button>
        <p className={styles.switch}>
          {t('login.noAccount')}{' '}
          <Button variant="link" onClick={() => openDialog('register')}>
            {t('login.toRegister')}
          </Button>
        </p>
      </form>
    </Dialog>
  );
}
