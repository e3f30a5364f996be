import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { toast } from '@/components/toast';
import { useAuthStore } from '@/features/auth';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useValidationText } from '@/hooks/use-validation-text';
import { validateName } from '@/lib/validation';
import type { User } from '@/types/generated';
import { profileApi } from '../api/profile-api';
import styles from './profile-page.module.css';
import { ProfileSection } from './profile-section';

/** The display name (the e-mail is shown but cannot change). */
export function ProfileDetailsForm({ user }: { user: User }) {
  const { t } = useTranslation('profile');
  const validationText = useValidationText();
  const updateUser = useAuthStore((s) => s.updateUser);
  const action = useAsyncAction();
  // null: not edited, so the field follows the account (a rename in another tab shows here).
  const [draft, setDraft] = useState<string | null>(null);
  const [submitted, setSubmitted] = useState(false);
  const name = draft ?? user.name;
  const error = submitted ? validateName(name) : null;

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (validateName(name)) {
      action.setError(null);
      return;
    }
    await action.run(async () => {
      const updated = await profileApi.updateName(name.trim());
      updateUser(updated);
      setDraft(null);
      setSubmitted(false);
      toast.positive(t('details.saved'), { timeout: 3000 });
    });
  };

  return (
    <ProfileSection title={t('details.title')}>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        <FormAlert>{action.error}</FormAlert>
        <TextField
          label={t('details.name')}
          autoComplete="name"
          required
          value={name}
          onChange={(e) => setDraft(e.target.value)}
          error={validationText(error)}
          data-testid="profile-name-input"
        />
        <dl className={styles.readonly}>
          <dt>{t('details.email')}</dt>
          <dd>{user.email}</dd>
          <dd className={styles.hint}>{t('details.emailHint')}</dd>
        </dl>
        <div className={`${styles.actions} ${styles.actionsEnd}`}>
          <Button type="submit" loading={action.pending} data-testid="profile-save">
            {t('details.save')}
          </Button>
        </div>
      </form>
    </ProfileSection>
  );
}
