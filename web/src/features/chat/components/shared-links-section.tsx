import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Spinner } from '@/components/spinner';
import { toast } from '@/components/toast';
import { errorMessage } from '@/lib/api-client';
import type { Share } from '@/types/generated';
import { chatApi } from '../api/chat-api';
import listPanel from './list-panel.module.css';
import styles from './shared-links-section.module.css';

type Load = { status: 'loading' } | { status: 'error' } | { status: 'ready'; shares: Share[] };

/**
 * Settings → Shared links: every link the user made, newest first, each with its page and
 * "Revoke" (the link answers "not found" at once). Rendered inside the settings' card.
 */
export function SharedLinksList() {
  const { t, i18n } = useTranslation('chat');
  const [load, setLoad] = useState<Load>({ status: 'loading' });
  const [revoking, setRevoking] = useState<string | null>(null);

  const fetchShares = () =>
    chatApi
      .listShares()
      .then(({ data }) => setLoad({ status: 'ready', shares: data }))
      .catch(() => setLoad({ status: 'error' }));
  useEffect(() => void fetchShares(), []);
  const read = () => {
    setLoad({ status: 'loading' });
    void fetchShares();
  };

  const revoke = async (share: Share) => {
    setRevoking(share._id);
    try {
      await chatApi.deleteShare(share._id);
      setLoad((l) => (l.status === 'ready' ? { status: 'ready', shares: l.shares.filter((s) => s._id !== share._id) } : l));
      toast.info(t('links.revoked'), { timeout: 3000 });
    } catch (error) {
      const message = errorMessage(error);
      if (message) toast.negative(message);
    } finally {
      setRevoking(null);
    }
  };

  if (load.status === 'loading') return <Spinner size="small" label={t('links.loading')} />;
  if (load.status === 'error') {
    return (
      <div role="alert" className={listPanel.state}>
        <p>{t('links.loadFailed')}</p>
        <Button variant="secondary" size="small" onClick={read}>
          {t('actions.retry')}
        </Button>
      </div>
    );
  }
  if (load.shares.length === 0) return <p className={listPanel.state}>{t('links.empty')}</p>;
  return (
    <ul className={listPanel.list} data-testid="shared-links">
      {load.shares.map((share) => {
        const title = share.title ?? t('untitled');
        return (
          <li key={share._id} className={`${listPanel.row} ${styles.item}`} data-testid="shared-link" data-share-id={share._id}>
            <span className={styles.text}>
              <a href={share.url} target="_blank" rel="noopener noreferrer" className={styles.title}>
                {title}
              </a>
              <span className={listPanel.meta}>
                {new Date(share.createdAt).toLocaleDateString(i18n.language)}
                {share.showName ? ` · ${t('links.withName')}` : ''}
              </span>
            </span>
            <Button
              variant="secondary"
              size="small"
              loading={revoking === share._id}
              aria-label={t('links.revokeOne', { title })}
              data-testid="revoke-share"
              onClick={() => void revoke(share)}
            >
              {t('links.revoke')}
            </Button>
          </li>
        );
      })}
    </ul>
  );
}
