import { useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { useCloseDrawer } from '@/components/layout/sidebar-slot-context';
import { Spinner } from '@/components/spinner';
import type { Conversation } from '@/types/api';
import { useChatStore } from '../stores/chat-store';
import { PencilIcon, PlusIcon, TrashIcon } from './chat-icons';
import { DeleteConversationDialog, RenameConversationDialog } from './conversation-dialogs';
import styles from './conversation-sidebar.module.css';

/** The sidebar: "new chat", then the conversations, newest first, with "load more". */
export function ConversationSidebar({ activeId }: { activeId: string | null }) {
  const { t } = useTranslation('chat');
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const headingId = useId();
  const newChatRef = useRef<HTMLButtonElement>(null);
  const closeDrawer = useCloseDrawer();
  const list = useChatStore((s) => s.list);
  const listStatus = useChatStore((s) => s.listStatus);
  const loadingMore = useChatStore((s) => s.loadingMore);
  const loadMoreFailed = useChatStore((s) => s.loadMoreFailed);
  const [renaming, setRenaming] = useState<Conversation | null>(null);
  const [deleting, setDeleting] = useState<Conversation | null>(null);

  const startNewChat = () => {
    if (pathname === '/chat') closeDrawer();
    else void navigate('/chat');
    useChatStore.getState().requestComposerFocus();
  };

  return (
    <div className={styles.sidebar}>
      <div className={styles.top}>
        <Button ref={newChatRef} block data-testid="new-chat-button" onClick={startNewChat}>
          <PlusIcon />
          {t('newChat')}
        </Button>
      </div>
      <h2 id={headingId} className={styles.heading}>
        {t('conversations')}
      </h2>

      {listStatus === 'loading' && (
        <div className={styles.state}>
          <Spinner size="small" label={t('list.loading')} />
        </div>
      )}
      {listStatus === 'error' && (
        <div className={styles.state}>
          <p>{t('list.loadFailed')}</p>
          <Button variant="secondary" size="small" onClick={() => void useChatStore.getState().loadConversations()}>
            {t('actions.retry')}
          </Button>
        </div>
      )}
      {listStatus === 'ready' && list.items.length === 0 && <p className={styles.state}>{t('list.empty')}</p>}

      <ul className={styles.list} aria-labelledby={headingId} data-testid="conversation-list">
        {list.items.map((conversation) => (
          <ConversationItem
            key={conversation._id}
            conversation={conversation}
            active={conversation._id === activeId}
            onRename={() => setRenaming(conversation)}
            onDelete={() => setDeleting(conversation)}
          />
        ))}
      </ul>

      {list.nextCursor && listStatus === 'ready' && (
        <div className={styles.more}>
          {loadMoreFailed && <p role="alert">{t('list.loadMoreFailed')}</p>}
          <Button
            variant="secondary"
            size="small"
            block
            loading={loadingMore}
            data-testid="load-more-conversations"
            onClick={() => void useChatStore.getState().loadMoreConversations()}
          >
            {t('list.loadMore')}
          </Button>
        </div>
      )}

      <RenameConversationDialog
        key={`rename-${renaming?._id ?? ''}`}
        conversation={renaming}
        onClose={() => setRenaming(null)}
      />
      <DeleteConversationDialog
        key={`delete-${deleting?._id ?? ''}`}
        conversation={deleting}
        onClose={(deleted) => {
          setDeleting(null);
          if (!deleted) return;
          if (deleting?._id === activeId) void navigate('/chat', { replace: true });
          // The item and its buttons are gone: give the focus a place to stay.
          requestAnimationFrame(() => newChatRef.current?.focus());
        }}
      />
    </div>
  );
}

function ConversationItem({
  conversation,
  active,
  onRename,
  onDelete,
}: {
  conversation: Conversation;
  active: boolean;
  onRename: () => void;
  onDelete: () => void;
}) {
  const { t } = useTranslation('chat');
  const closeDrawer = useCloseDrawer();
  const title = conversation.title ?? t('untitled');
  return (
    <li className={styles.item} data-testid="conversation-item" data-conversation-id={conversation._id} data-active={active}>
      <Link
        to={`/chat/${conversation._id}`}
        className={styles.link}
        aria-current={active ? 'page' : undefined}
        title={title}
        onClick={() => {
          if (active) closeDrawer();
        }}
      >
        <span className={conversation.title ? undefined : styles.untitled}>{title}</span>
      </Link>
      <span className={styles.actions}>
        <Button
          variant="ghost"
          size="small"
          iconOnly
          aria-label={t('list.rename', { title })}
          data-testid="rename-conversation"
          onClick={onRename}
        >
          <PencilIcon width={16} height={16} />
        </Button>
        <Button
          variant="ghost"
          size="small"
          iconOnly
          aria-label={t('list.delete', { title })}
          data-testid="delete-conversation"
          onClick={onDelete}
        >
          <TrashIcon width={16} height={16} />
        </Button>
      </span>
    </li>
  );
}
