import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { toast } from '@/components/toast';
import { useAuthStore } from '@/features/auth';
import { useAsyncAction } from '@/hooks/use-async-action';
import { profileApi } from '../api/profile-api';
import styles from './profile-page.module.css';
import { ProfileSection } from './profile-section';

/**
 * Deletion after a confirmation dialog (the server asks for no password). The server also
 * sends this tab `session.revoked` (account_deleted), which may log it out before the
 * answer arrives; both paths end signed out on `/`.
 */
export function DeleteAccountSection() {
  const { t } = useTranslation(['profile', 'common', 'auth']);
  const logout = useAuthStore((s) => s.logout);
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const action = useAsyncAction();

  const close = () => {
    if (action.pending) return;
    setOpen(false);
    action.setError(null);
  };

  const onConfirm = async () => {
    const deleted = await action.run(() => profileApi.deleteAccount().then(() => undefined));
    if (!deleted) return;
    logout();
    toast.info(t('auth:session.accountDeleted'));
    await navigate('/', { replace: true });
  };

  return (
    <ProfileSection title={t('delete.title')} tone="danger">
      <p className={styles.muted}>{t('delete.intro')}</p>
      <div className={styles.actions}>
        <Button variant="danger" onClick={() => setOpen(true)}>
          {t('delete.open')}
        </Button>
      </div>
      {open && (
        <Dialog open onClose={close} title={t('delete.dialogTitle')}>
          <p className={styles.dialogText}>{t('delete.dialogText')}</p>
          <FormAlert>{action.error}</FormAlert>
          <div className={`${styles.actions} ${styles.actionsEnd}`}>
            <Button variant="secondary" disabled={action.pending} onClick={close}>
              {t('common:actions.cancel')}
            </Button>
            <Button variant="danger" loading={action.pending} onClick={onConfirm}>
              {t('delete.confirm')}
            </Button>
          </div>
        </Dialog>
      )}
    </ProfileSection>
  );
}
