import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { buttonClassName } from '@/components/button-class-name';
import { useDocumentTitle } from '@/hooks/use-document-title';
import styles from './not-found-page.module.css';

/** Outside the main layout (SPEC §2), so it stands on its own. Only signed-in users reach it. */
export function NotFoundPage() {
  const { t } = useTranslation('legal');
  useDocumentTitle(t('notFound.title'));
  return (
    <main className={styles.page}>
      <div className={styles.content}>
        <p className={styles.code} aria-hidden="true">
          404
        </p>
        <h1 className={styles.title}>{t('notFound.title')}</h1>
        <p className={styles.text}>{t('notFound.text')}</p>
        <div className={styles.actions}>
          <Link to="/" className={buttonClassName()}>
            {t('notFound.home')}
          </Link>
          <Link to="/chat" className={buttonClassName({ variant: 'secondary' })}>
            {t('notFound.chat')}
          </Link>
        </div>
      </div>
    </main>
  );
}
