import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';

/** "Page – AI Chat": screen readers announce the new title after a client-side navigation. */
export function useDocumentTitle(title?: string): void {
  const { t } = useTranslation();
  const appName = t('appName');
  useEffect(() => {
    document.title = title ? `${title} – ${appName}` : appName;
  }, [title, appName]);
}
