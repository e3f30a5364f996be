import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { GlobeIcon } from '@/components/icons';
import { useAuthStore } from '@/features/auth';
import { currentLanguage, isLanguage, SUPPORTED_LANGUAGES } from '@/lib/i18n';
import styles from './language-select.module.css';

/** A native select: keyboard and screen-reader friendly, and the phone's own picker. */
export function LanguageSelect() {
  // useTranslation re-renders this on every language change.
  const { t } = useTranslation();
  const changeLanguage = useAuthStore((s) => s.changeLanguage);
  const id = useId();
  const language = currentLanguage();
  return (
    <span className={styles.wrapper}>
      <label htmlFor={id} className="visually-hidden">
        {t('language.label')}
      </label>
      <GlobeIcon />
      <select
        id={id}
        className={styles.select}
        value={language}
        onChange={(event) => {
          if (isLanguage(event.target.value)) void changeLanguage(event.target.value);
        }}
      >
        {SUPPORTED_LANGUAGES.map((lang) => (
          // Each language is named in itself, so a user who cannot read the current one finds theirs.
          <option key={lang} value={lang} lang={lang}>
            {t(`language.${lang}`)}
          </option>
        ))}
      </select>
    </span>
  );
}
