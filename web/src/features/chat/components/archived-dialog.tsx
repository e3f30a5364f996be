import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { Spinner } from '@/components/spinner';
import type { Conversation } from '@/types/generated';
import { useChatStore } from '../stores/chat';
import { patchConversation } from '../stores/conversation-flags';
import listPanel from './list-panel.module.css';
import styles from './archived-dialog.module.css';
import { TrashIcon } from './chat-icons';

/**
 * The archived conversations (`GET /api/conversations?archived=true`): each opens, comes
 * back to the list ("Unarchive") or is deleted. Kept live by `conversation.updated`.
 */
export function ArchivedDialog({
  open,
  activeId,
  onClose,
  onDelete,
}: {
  open: boolean;
  activeId: string | null;
  onClose: () => void;
  onDelete: (conversation: Conversation) => void;
}) {
  const { t } = useTranslation('chat');
  const archived = useChatStore((s) => s.archived);
  const status = useChatStore((s) => s.archivedStatus);
  const loadingMore = useChatStore((s) => s.archivedLoadingMore);

  // Read afresh on each opening: what other devices archived meanwhile.
  useEffect(() => {
    if (open) void useChatStore.getState().loadArchived();
  }, [open]);

  return (
    <Dialog open={open} onClose={onClose} title={t('archived.title')} className={styles.dialog}>
      <div data-testid="archived-view">
        {status === 'loading' && <Spinner size="small" label={t('list.loading')} />}
        {status === 'error' && (
          <div className={listPanel.state} role="alert">
            <p>{t('archived.loadFailed')}</p>
            <Button variant="secondary" size="small" onClick={() => void useChatStore.getState().loadArchived()}>
              {t('actions.retry')}
            </Button>
          </div>
        )}
        {status === 'ready' && archived.items.length === 0 && <p className={listPanel.state}>{t('archived.empty')}</p>}
        <ul className={listPanel.list} aria-label={t('archived.title')}>
          {archived.items.map((conversation) => {
            const title = conversation.title ?? t('untitled');
            return (
              <li key={conversation._id} className={`${listPanel.row} ${styles.item}`} data-testid="archived-item" data-conversation-id={conversation._id}>
                <Link
                  to={`/chat/${conversation._id}`}
                  className={styles.link}
                  aria-current={conversation._id === activeId ? 'page' : undefined}
                  onClick={onClose}
                >
                  {title}
                </Link>
                <span className={listPanel.meta}>{new Date(conversation.updatedAt).toLocaleDateString()}</span>
                <span className={styles.buttons}>
                  <Button
                    variant="secondary"
                    size="small"
                    aria-label={t('archived.unarchiveOne', { title })}
                    data-testid="unarchive-conversation"
                    onClick={() => void patchConversation(conversation._id, { archived: false })}
                  >
                    {t('menu.unarchive')}
                  </Button>
                  <Button
                    variant="ghost"
                    size="small"
                    iconOnly
                    aria-label={t('list.delete', { title })}
                    data-testid="delete-archived"
                    onClick={() => onDelete(conversation)}
                  >
                    <TrashIcon width={16} height={16} />
                  </Button>
                </span>
              </li>
            );
          })}
        </ul>
        {archived.nextCursor && status === 'ready' && (
          <Button variant="secondary" size="small" block loading={loadingMore} onClick={() => void useChatStore.getState().loadMoreArchived()}>
            {t('list.loadMore')}
          </Button>
        )}
        <div className={styles.footer}>
          <Button variant="secondary" onClick={onClose}>
            {t('share.close')}
          </Button>
        </div>
      </div>
    </Dialog>
  );
}
