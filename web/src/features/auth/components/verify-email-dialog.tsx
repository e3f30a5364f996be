import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { toast } from '@/components/toast';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useValidationText } from '@/hooks/use-validation-text';
import { validateCode } from '@/lib/validation';
import { useAuthStore } from '../stores/auth-store';
import styles from './auth-form.module.css';
import { CodeField } from './code-field';

export function VerifyEmailDialog({ email, onClose }: { email: string; onClose: () => void }) {
  const { t } = useTranslation('auth');
  const validationText = useValidationText();
  const verify = useAuthStore((s) => s.verify);
  const resend = useAuthStore((s) => s.resend);
  const navigate = useNavigate();
  const submitAction = useAsyncAction();
  const resendAction = useAsyncAction();
  const [code, setCode] = useState('');
  const [submitted, setSubmitted] = useState(false);
  // Typed into and then left: a half-typed code is pointed out, a field merely focused is not.
  const [edited, setEdited] = useState(false);
  const [touched, setTouched] = useState(false);

  const codeError = submitted || touched ? validateCode(code) : null;

  const onCodeChange = (value: string) => {
    setCode(value);
    setEdited(true);
  };

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (validateCode(code)) return;
    await submitAction.run(async () => {
      const user = await verify(code);
      toast.positive(t('verify.success', { name: user.name }));
      onClose();
      await navigate('/chat');
    });
  };

  const onResend = async () => {
    // The old code's "Invalid code" is about a code that no longer counts.
    submitAction.setError(null);
    const ok = await resendAction.run(resend);
    if (ok) {
      // A fresh start for the new code: nothing is wrong with a field not yet typed into.
      setCode('');
      setSubmitted(false);
      setEdited(false);
      setTouched(false);
      toast.positive(t('verify.resent'), { timeout: 3000 });
    }
  };

  return (
    <Dialog open onClose={onClose} title={t('verify.title')}>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        <p className={styles.intro}>{t('verify.intro', { email })}</p>
        <FormAlert>{submitAction.error ?? resendAction.error}</FormAlert>
        <CodeField
          label={t('verify.code')}
          autoFocus
          value={code}
          onValueChange={onCodeChange}
          onBlur={() => setTouched(edited)}
          error={validationText(codeError)}
        />
        <Button type="submit" block loading={submitAction.pending}>
          {t('verify.submit')}
        </Button>
        <Button variant="secondary" block loading={resendAction.pending} onClick={onResend}>
          {t('verify.resend')}
        </Button>
      </form>
    </Dialog>
  );
}
