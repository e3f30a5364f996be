import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '@/components/button';
import { openCookieSettings } from '@/features/cookies';
import styles from './settings-page.module.css';
import { SettingsSection } from './settings-section';

/** Cookie settings (reopens the consent dialog of the cookies feature) and the policy. */
export function PrivacySection() {
  const { t } = useTranslation('settings');
  return (
    <SettingsSection id="privacy" title={t('privacy.title')}>
      <p className={styles.muted}>{t('privacy.cookiesHint')}</p>
      <div className={styles.actions}>
        <Button variant="secondary" onClick={openCookieSettings} data-testid="settings-cookies">
          {t('privacy.cookies')}
        </Button>
        <Link to="/privacy-policy">{t('privacy.policy')}</Link>
      </div>
    </SettingsSection>
  );
}
