import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { Spinner } from '@/components/spinner';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { useAuditStore } from '../stores/admin-stores';
import styles from './admin.module.css';
import { AdminNav } from './admin-nav';
import { AuditTable } from './audit-table';

/**
 * `/admin/audit`: what admins did, newest first. `?userId=` (the user page's link) keeps
 * to one user; the filter lives in the address, so the link can be shared and Back works.
 */
export function AuditPage() {
  const { t } = useTranslation('admin');
  useDocumentTitle(t('audit.title'));
  const [params] = useSearchParams();
  const userId = params.get('userId') ?? undefined;
  const { rows, nextCursor, status, loadingMore, error, search, loadMore } = useAuditStore();

  useEffect(() => {
    void search({ userId });
  }, [userId, search]);

  // The user's e-mail as the log knew it, from any of their rows.
  const target = userId ? rows.find((row) => row.targetUserId === userId)?.target : undefined;

  return (
    <div className={styles.page}>
      <AdminNav />
      <h1>{t('audit.title')}</h1>
      {userId && (
        <p className={styles.filterNote} data-testid="admin-audit-filter">
          <span>{t('audit.filteredBy', { user: target ?? userId })}</span>{' '}
          <Link to={`/admin/users/${encodeURIComponent(userId)}`}>{t('audit.openUser')}</Link>{' '}
          <Link to="/admin/audit" data-testid="admin-audit-clear">
            {t('audit.clearFilter')}
          </Link>
        </p>
      )}
      <FormAlert>{error}</FormAlert>
      {status === 'loading' && <Spinner label={t('audit.loading')} />}
      {status === 'ready' && rows.length === 0 && (
        <p className={styles.muted} data-testid="admin-audit-empty">
          {t('audit.empty')}
        </p>
      )}
      {rows.length > 0 && status !== 'loading' && <AuditTable entries={rows} label={t('audit.title')} />}
      {nextCursor && status === 'ready' && (
        <div className={styles.more}>
          <Button variant="secondary" loading={loadingMore} onClick={() => void loadMore()} data-testid="admin-audit-more">
            {t('list.more')}
          </Button>
        </div>
      )}
    </div>
  );
}
