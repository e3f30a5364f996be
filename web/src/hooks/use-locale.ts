import { useTranslation } from 'react-i18next';

/** The interface language, for Intl formatting; re-renders when it changes. */
export function useLocale(): string {
  const { i18n } = useTranslation();
  return i18n.resolvedLanguage ?? i18n.language;
}
