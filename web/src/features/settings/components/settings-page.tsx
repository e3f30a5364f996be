import { useTranslation } from 'react-i18next';
import { PlaceholderPage } from '@/components/placeholder-page';

/** Placeholder: the application settings screen (SPEC §2) is built next. */
export function SettingsPage() {
  const { t } = useTranslation('settings');
  return <PlaceholderPage title={t('title')} />;
}
