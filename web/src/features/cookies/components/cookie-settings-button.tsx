import { useTranslation } from 'react-i18next';
import { Button, type ButtonProps } from '@/components/button';
import { openCookieSettings } from '../stores/consent-store';

/** "Cookie settings": reopens the consent dialog, for the settings page and the privacy policy. */
export function CookieSettingsButton({ variant = 'secondary', ...props }: Omit<ButtonProps, 'onClick' | 'children'>) {
  const { t } = useTranslation('cookies');
  return (
    <Button variant={variant} onClick={openCookieSettings} {...props}>
      {t('openSettings')}
    </Button>
  );
}
