import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { openAuthDialog } from '../stores/auth-dialog-store';

/** Log in / Register for guests (header, landing page). */
export function AuthButtons({ size = 'small' }: { size?: 'small' | 'medium' }) {
  const { t } = useTranslation();
  return (
    <>
      <Button variant="ghost" size={size} onClick={() => openAuthDialog('login')}>
        {t('header.login')}
      </Button>
      <Button size={size} onClick={() => openAuthDialog('register')}>
        {t('header.register')}
      </Button>
    </>
  );
}
