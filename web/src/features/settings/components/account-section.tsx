import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { buttonClassName } from '@/components/button-class-name';
import { toast } from '@/components/toast';
import { useAuthStore } from '@/features/auth';
import type { User } from '@/types/generated';
import { DataSection } from './data-section';
import styles from './settings-page.module.css';
import { SettingsSection } from './settings-section';

export function AccountSection({ user }: { user: User }) {
  const { t } = useTranslation(['settings', 'auth']);
  const logout = useAuthStore((s) => s.logout);
  const navigate = useNavigate();

  const onLogout = async () => {
    logout();
    toast.info(t('auth:session.loggedOut'), { timeout: 3000 });
    await navigate('/');
  };

  return (
    <SettingsSection id="account" title={t('account.title')}>
      <dl className={styles.details}>
        <dt>{t('account.name')}</dt>
        <dd>{user.name}</dd>
        <dt>{t('account.email')}</dt>
        <dd>{user.email}</dd>
      </dl>
      <div className={styles.actions}>
        <Link to="/profile" className={buttonClassName({ variant: 'secondary' })}>
          {t('account.editProfile')}
        </Link>
        <Button variant="ghost" onClick={onLogout}>
          {t('account.logout')}
        </Button>
      </div>
      <DataSection />
    </SettingsSection>
  );
}
