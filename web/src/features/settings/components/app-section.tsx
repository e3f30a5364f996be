import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Checkbox } from '@/components/checkbox';
import { useAuthStore } from '@/features/auth';
import { currentLanguage, SUPPORTED_LANGUAGES } from '@/lib/i18n';
import { FONT_SIZES, THEMES, useLocalSettingsStore } from '../stores/local-settings-store';
import { SelectField } from './select-field';
import styles from './settings-page.module.css';
import { SettingsSection } from './settings-section';

type Permission = NotificationPermission | 'unsupported';

const readPermission = (): Permission => (typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);

/**
 * Language (saved to the account, applied at once) and the appearance kept in this
 * browser (SPEC §3). The local values sync between tabs through the store's storage event.
 */
export function AppSection() {
  const { t } = useTranslation(['settings', 'common']);
  const changeLanguage = useAuthStore((s) => s.changeLanguage);
  const theme = useLocalSettingsStore((s) => s.theme);
  const fontSize = useLocalSettingsStore((s) => s.fontSize);
  const notifications = useLocalSettingsStore((s) => s.notifications);
  const setTheme = useLocalSettingsStore((s) => s.setTheme);
  const setFontSize = useLocalSettingsStore((s) => s.setFontSize);
  const setNotifications = useLocalSettingsStore((s) => s.setNotifications);
  const notificationsHintId = useId();
  const blockedId = useId();
  const [permission, setPermission] = useState(readPermission);

  // The browser's permission is asked for only here, in answer to the user's own click.
  const changeNotifications = (enabled: boolean) => {
    setNotifications(enabled);
    if (!enabled || typeof Notification === 'undefined') return;
    if (Notification.permission !== 'default') {
      setPermission(Notification.permission);
      return;
    }
    void Notification.requestPermission()
      .then(setPermission)
      .catch(() => setPermission(readPermission()));
  };

  return (
    <SettingsSection id="app" title={t('app.title')}>
      <div className={styles.grid}>
        <SelectField
          label={t('app.language')}
          hint={t('app.languageHint')}
          value={currentLanguage()}
          // Each language named in itself, so a user who cannot read the current one finds theirs.
          options={SUPPORTED_LANGUAGES.map((lang) => ({ value: lang, label: t(`common:language.${lang}`), lang }))}
          onValueChange={(language) => void changeLanguage(language)}
          data-testid="settings-language"
        />
        <SelectField
          label={t('app.theme')}
          value={theme}
          options={THEMES.map((value) => ({ value, label: t(`app.themes.${value}`) }))}
          onValueChange={setTheme}
          data-testid="settings-theme"
        />
        <SelectField
          label={t('app.fontSize')}
          value={fontSize}
          options={FONT_SIZES.map((value) => ({ value, label: t(`app.fontSizes.${value}`) }))}
          onValueChange={setFontSize}
          data-testid="settings-font-size"
        />
      </div>
      <div className={styles.field}>
        <Checkbox
          label={t('app.notifications')}
          checked={notifications}
          onChange={(event) => changeNotifications(event.target.checked)}
          aria-describedby={permission === 'denied' ? `${notificationsHintId} ${blockedId}` : notificationsHintId}
          data-testid="settings-notifications"
        />
        <span id={notificationsHintId} className={styles.hint}>
          {t('app.notificationsHint')}
        </span>
        {permission === 'denied' && (
          <span id={blockedId} className={styles.error} data-testid="settings-notifications-blocked">
            {t('app.notificationsBlocked')}
          </span>
        )}
      </div>
      <p className={styles.hint}>{t('app.localHint')}</p>
    </SettingsSection>
  );
}
