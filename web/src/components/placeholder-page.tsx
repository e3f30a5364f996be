import { useTranslation } from 'react-i18next';
import { useDocumentTitle } from '@/hooks/use-document-title';

/**
 * A routed screen that exists so navigation, the guard and the layout work end to end,
 * while its feature is built: only the heading is real.
 */
export function PlaceholderPage({ title }: { title: string }) {
  const { t } = useTranslation();
  useDocumentTitle(title);
  return (
    <section>
      <h1>{title}</h1>
      <p>{t('placeholder')}</p>
    </section>
  );
}
