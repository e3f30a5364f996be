import { useTranslation } from 'react-i18next';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { Link } from 'react-router';
import { buttonClassName } from '@/components/button-class-name';
import styles from './not-found-page.module.css';

/** Outside the main layout (SPEC §2), so it stands on its own. */
export function NotFoundPage() {
  const { t } = useTranslation('legal');
  useDocumentTitle(t('notFound.title'));
  return (
    <main className={styles.page}>
      <div>
        <p className={styles.code} aria-hidden="true">
          404
        </p>
        <h1>{t('notFound.title')}</h1>
        <p>{t('notFound.text')}</p>
        <Link to="/" className={buttonClassName()}>
          {t('notFound.home')}
        </Link>
      </div>
    </main>
  );
}
