import { useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { useCloseDrawer } from '@/components/layout/sidebar-slot-context';
import { Spinner } from '@/components/spinner';
import { selectPlan, useSubscriptionStore } from '@/features/subscription';
import type { Conversation, Project } from '@/types/generated';
import { projectGate } from '../lib/gating';
import { useChatStore } from '../stores/chat-store';
import type { ConversationList } from '../stores/conversation-list';
import { useProjectStore } from '../stores/project-store';
import { FolderMoveIcon, PencilIcon, PlusIcon, TrashIcon } from './chat-icons';
import { DeleteConversationDialog, RenameConversationDialog } from './conversation-dialogs';
import styles from './conversation-sidebar.module.css';
import { DeleteProjectDialog, MoveConversationDialog, ProjectFormDialog, type ProjectFormMode } from './project-dialogs';
import { ProjectPanel, ProjectSection } from './project-section';

/**
 * The sidebar: "new chat", the projects, then the conversations, newest first, with
 * "load more": all of them, or the chosen project's below its panel.
 */
export function ConversationSidebar({ activeId }: { activeId: string | null }) {
  const { t } = useTranslation('chat');
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const newChatRef = useRef<HTMLButtonElement>(null);
  const closeDrawer = useCloseDrawer();
  const all = useChatStore((s) => s.list);
  const allStatus = useChatStore((s) => s.listStatus);
  const allLoadingMore = useChatStore((s) => s.loadingMore);
  const allLoadMoreFailed = useChatStore((s) => s.loadMoreFailed);
  const projects = useProjectStore((s) => s.projects);
  const selectedId = useProjectStore((s) => s.selectedId);
  const projectList = useProjectStore((s) => s.list);
  const projectListStatus = useProjectStore((s) => s.listStatus);
  const projectLoadingMore = useProjectStore((s) => s.loadingMore);
  const projectLoadMoreFailed = useProjectStore((s) => s.loadMoreFailed);
  const gate = useSubscriptionStore((s) => projectGate(selectPlan(s)));
  const [renaming, setRenaming] = useState<Conversation | null>(null);
  const [deleting, setDeleting] = useState<Conversation | null>(null);
  const [moving, setMoving] = useState<Conversation | null>(null);
  const [projectForm, setProjectForm] = useState<ProjectFormMode | null>(null);
  const [deletingProject, setDeletingProject] = useState<Project | null>(null);
  const selected = selectedId ? (projects.find((p) => p._id === selectedId) ?? null) : null;
  // Moving is offered where it can be done: into projects on a plan with them, out of
  // projects a user still has after a downgrade.
  const canMove = gate === 'available' || projects.length > 0;

  const startNewChat = () => {
    if (pathname === '/chat') closeDrawer();
    else void navigate('/chat');
    useChatStore.getState().requestComposerFocus();
  };

  const focusNewChat = () => requestAnimationFrame(() => newChatRef.current?.focus());

  return (
    <div className={styles.sidebar}>
      <div className={styles.top}>
        <Button ref={newChatRef} block data-testid="new-chat-button" onClick={startNewChat}>
          <PlusIcon />
          {t('newChat')}
        </Button>
      </div>

      <ProjectSection onCreate={() => setProjectForm({ kind: 'create' })} />

      {selected ? (
        <>
          <ProjectPanel
            key={selected._id}
            project={selected}
            onEdit={() => setProjectForm({ kind: 'edit', project: selected })}
            onDelete={() => setDeletingProject(selected)}
          />
          <ConversationListView
            heading={t('projects.conversations', { name: selected.name })}
            emptyText={t('projects.empty')}
            list={projectList}
            status={projectListStatus}
            loadingMore={projectLoadingMore}
            loadMoreFailed={projectLoadMoreFailed}
            onRetry={() => void useProjectStore.getState().loadConversations()}
            onLoadMore={() => void useProjectStore.getState().loadMoreConversations()}
            activeId={activeId}
            canMove={canMove}
            onRename={setRenaming}
            onMove={setMoving}
            onDelete={setDeleting}
          />
        </>
      ) : (
        <ConversationListView
          heading={t('conversations')}
          emptyText={t('list.empty')}
          list={all}
          status={allStatus}
          loadingMore={allLoadingMore}
          loadMoreFailed={allLoadMoreFailed}
          onRetry={() => void useChatStore.getState().loadConversations()}
          onLoadMore={() => void useChatStore.getState().loadMoreConversations()}
          activeId={activeId}
          canMove={canMove}
          onRename={setRenaming}
          onMove={setMoving}
          onDelete={setDeleting}
        />
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
          focusNewChat();
        }}
      />
      <MoveConversationDialog key={`move-${moving?._id ?? ''}`} conversation={moving} onClose={() => setMoving(null)} />
      <ProjectFormDialog
        key={projectForm ? (projectForm.kind === 'edit' ? `edit-${projectForm.project._id}` : 'create') : 'closed'}
        mode={projectForm}
        onClose={(saved) => {
          // A new project is chosen at once: its panel is where documents and chats start.
          if (saved && projectForm?.kind === 'create') useProjectStore.getState().select(saved._id);
          setProjectForm(null);
        }}
      />
      <DeleteProjectDialog
        key={`delete-project-${deletingProject?._id ?? ''}`}
        project={deletingProject}
        onClose={(deleted) => {
          setDeletingProject(null);
          if (deleted) focusNewChat();
        }}
      />
    </div>
  );
}

function ConversationListView({
  heading,
  emptyText,
  list,
  status,
  loadingMore,
  loadMoreFailed,
  onRetry,
  onLoadMore,
  activeId,
  canMove,
  onRename,
  onMove,
  onDelete,
}: {
  heading: string;
  emptyText: string;
  list: ConversationList;
  status: 'idle' | 'loading' | 'ready' | 'error';
  loadingMore: boolean;
  loadMoreFailed: boolean;
  onRetry: () => void;
  onLoadMore: () => void;
  activeId: string | null;
  canMove: boolean;
  onRename: (conversation: Conversation) => void;
  onMove: (conversation: Conversation) => void;
  onDelete: (conversation: Conversation) => void;
}) {
  const { t } = useTranslation('chat');
  const headingId = useId();
  return (
    <>
      <h2 id={headingId} className={styles.heading} data-testid="conversation-list-heading">
        {heading}
      </h2>

      {status === 'loading' && (
        <div className={styles.state}>
          <Spinner size="small" label={t('list.loading')} />
        </div>
      )}
      {status === 'error' && (
        <div className={styles.state}>
          <p>{t('list.loadFailed')}</p>
          <Button variant="secondary" size="small" onClick={onRetry}>
            {t('actions.retry')}
          </Button>
        </div>
      )}
      {status === 'ready' && list.items.length === 0 && <p className={styles.state}>{emptyText}</p>}

      <ul className={styles.list} aria-labelledby={headingId} data-testid="conversation-list">
        {list.items.map((conversation) => (
          <ConversationItem
            key={conversation._id}
            conversation={conversation}
            active={conversation._id === activeId}
            canMove={canMove}
            onRename={() => onRename(conversation)}
            onMove={() => onMove(conversation)}
            onDelete={() => onDelete(conversation)}
          />
        ))}
      </ul>

      {list.nextCursor && status === 'ready' && (
        <div className={styles.more}>
          {loadMoreFailed && <p role="alert">{t('list.loadMoreFailed')}</p>}
          <Button
            variant="secondary"
            size="small"
            block
            loading={loadingMore}
            data-testid="load-more-conversations"
            onClick={onLoadMore}
          >
            {t('list.loadMore')}
          </Button>
        </div>
      )}
    </>
  );
}

function ConversationItem({
  conversation,
  active,
  canMove,
  onRename,
  onMove,
  onDelete,
}: {
  conversation: Conversation;
  active: boolean;
  canMove: boolean;
  onRename: () => void;
  onMove: () => void;
  onDelete: () => void;
}) {
  const { t } = useTranslation('chat');
  const closeDrawer = useCloseDrawer();
  const title = conversation.title ?? t('untitled');
  return (
    <li
      className={styles.item}
      data-testid="conversation-item"
      data-conversation-id={conversation._id}
      data-project-id={conversation.projectId ?? undefined}
      data-active={active}
    >
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
        {canMove && (
          <Button
            variant="ghost"
            size="small"
            iconOnly
            aria-label={t('list.move', { title })}
            title={t('projects.moveDialog.title')}
            data-testid="move-conversation"
            onClick={onMove}
          >
            <FolderMoveIcon width={16} height={16} />
          </Button>
        )}
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
