import { useTranslation } from 'react-i18next';
import { PlaceholderPage } from '@/components/placeholder-page';

/** Placeholder: name, password change, profile image and account deletion come next. */
export function ProfilePage() {
  const { t } = useTranslation('profile');
  return <PlaceholderPage title={t('title')} />;
}
