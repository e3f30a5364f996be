import { useTranslation } from 'react-i18next';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { Link } from 'react-router';
import { Button } from '@/components/button';
import { buttonClassName } from '@/components/button-class-name';
import { openAuthDialog, selectIsAuthenticated, useAuthStore } from '@/features/auth';
import styles from './landing-page.module.css';

/** `/`: the one page besides the privacy policy that guests may open. */
export function LandingPage() {
  const { t } = useTranslation('legal');
  useDocumentTitle();
  const isAuthenticated = useAuthStore(selectIsAuthenticated);
  return (
    <section className={styles.hero}>
      <h1 className={styles.title}>{t('landing.title')}</h1>
      <p className={styles.subtitle}>{t('landing.subtitle')}</p>
      <div className={styles.actions}>
        {isAuthenticated ? (
          <Link to="/chat" className={buttonClassName()}>
            {t('landing.openChat')}
          </Link>
        ) : (
          <>
            <Button onClick={() => openAuthDialog('register')}>{t('landing.getStarted')}</Button>
            <Button variant="secondary" onClick={() => openAuthDialog('login')}>
              {t('landing.login')}
            </Button>
          </>
        )}
      </div>
      {!isAuthenticated && <p className={styles.note}>{t('landing.freePlan')}</p>}
    </section>
  );
}
