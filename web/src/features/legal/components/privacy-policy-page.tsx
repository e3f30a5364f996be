import { useTranslation } from 'react-i18next';
import { PlaceholderPage } from '@/components/placeholder-page';

/** Placeholder: the GDPR privacy policy text (under-16s, 24-month retention) comes next. */
export function PrivacyPolicyPage() {
  const { t } = useTranslation('legal');
  return <PlaceholderPage title={t('privacy.title')} />;
}
