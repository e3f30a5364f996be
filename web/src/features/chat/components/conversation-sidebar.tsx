import { useCallback, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { useCloseDrawer } from '@/components/layout/sidebar-slot-context';
import { Spinner } from '@/components/spinner';
import { toast } from '@/components/toast';
import { useProjectStore } from '@/features/projects';
import {
  DeleteProjectDialog,
  MoveConversationDialog,
  ProjectFormDialog,
  ProjectPanel,
  ProjectSection,
  type ProjectFormMode,
} from '@/features/projects/ui';
import { selectPlan, useSubscriptionStore } from '@/features/subscription';
import type { Conversation, Project } from '@/types/generated';
import { projectGate } from '../lib/gating';
import { useChatStore } from '../stores/chat';
import { patchConversation } from '../stores/conversation-flags';
import type { ConversationList } from '../stores/conversation-list';
import { ArchivedDialog } from './archived-dialog';
import { ArchiveIcon, PinIcon, PlusIcon } from './chat-icons';
import { DeleteConversationDialog, RenameConversationDialog } from './conversation-dialogs';
import { ConversationMenu } from './conversation-menu';
import { ConversationSearch } from './conversation-search';
import styles from './conversation-sidebar.module.css';
import { ShareDialog } from './share-dialog';

/**
 * The sidebar: "new chat", the search, the projects, then the conversations (pinned ones
 * first, then newest first) with "load more": all of them, or the chosen project's below
 * its panel; at the bottom, the archived ones. While the search has a query, its hits
 * take the place of the lists.
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
  const [sharing, setSharing] = useState<Conversation | null>(null);
  const [archivedOpen, setArchivedOpen] = useState(false);
  const [searching, setSearching] = useState(false);
  const onSearchingChange = useCallback((value: boolean) => setSearching(value), []);
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
  const focusRowMenu = (id: string) =>
    requestAnimationFrame(() =>
      document
        .querySelector<HTMLElement>(`[data-testid="conversation-item"][data-conversation-id="${CSS.escape(id)}"] [data-testid="conversation-menu-button"]`)
        ?.focus(),
    );

  const archive = (conversation: Conversation) => {
    void patchConversation(conversation._id, { archived: true }).then((done) => {
      if (!done) return;
      toast.info(t('archived.done', { title: conversation.title ?? t('untitled') }), { timeout: 3000 });
      // Its row and menu are gone: give the focus a place to stay.
      focusNewChat();
    });
  };

  const rowActions = {
    activeId,
    canMove,
    onRename: setRenaming,
    onMove: setMoving,
    onDelete: setDeleting,
    onShare: setSharing,
    onPin: (conversation: Conversation) =>
      void patchConversation(conversation._id, { pinned: !conversation.pinned }).then((done) => {
        // The row moved to the other section (a new element): its menu button keeps the focus.
        if (done) focusRowMenu(conversation._id);
      }),
    onArchive: archive,
  };

  return (
    <div className={styles.sidebar}>
      <div className={styles.top}>
        <Button ref={newChatRef} block data-testid="new-chat-button" onClick={startNewChat}>
          <PlusIcon />
          {t('newChat')}
        </Button>
      </div>

      <ConversationSearch onSearchingChange={onSearchingChange} />

      {!searching && <ProjectSection onCreate={() => setProjectForm({ kind: 'create' })} />}

      {searching ? null : selected ? (
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
            {...rowActions}
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
          {...rowActions}
        />
      )}

      {!searching && (
        <div className={styles.bottom}>
          <Button variant="ghost" size="small" block data-testid="open-archived" onClick={() => setArchivedOpen(true)}>
            <ArchiveIcon width={16} height={16} />
            {t('archived.open')}
          </Button>
        </div>
      )}

      <ArchivedDialog open={archivedOpen} activeId={activeId} onClose={() => setArchivedOpen(false)} onDelete={setDeleting} />
      {/* Mounted only while open: a closed one would be a second share dialog in the page. */}
      {sharing && <ShareDialog key={sharing._id} conversation={sharing} onClose={() => setSharing(null)} />}

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
  ...actions
}: {
  heading: string;
  emptyText: string;
  list: ConversationList;
  status: 'idle' | 'loading' | 'ready' | 'error';
  loadingMore: boolean;
  loadMoreFailed: boolean;
  onRetry: () => void;
  onLoadMore: () => void;
} & RowActions) {
  const { t } = useTranslation('chat');
  const headingId = useId();
  const pinnedHeadingId = useId();
  // The list is in the server's order, pinned first: they get a section of their own.
  const pinned = list.items.filter((c) => c.pinned);
  const others = pinned.length ? list.items.filter((c) => !c.pinned) : list.items;
  return (
    <>
      {pinned.length > 0 && (
        <>
          <h2 id={pinnedHeadingId} className={styles.heading} data-testid="pinned-heading">
            {t('list.pinned')}
          </h2>
          <ul className={styles.list} aria-labelledby={pinnedHeadingId} data-testid="pinned-list">
            {pinned.map((conversation) => (
              <ConversationItem key={conversation._id} conversation={conversation} {...actions} />
            ))}
          </ul>
        </>
      )}
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
        {others.map((conversation) => (
          <ConversationItem key={conversation._id} conversation={conversation} {...actions} />
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

interface RowActions {
  activeId: string | null;
  canMove: boolean;
  onRename: (conversation: Conversation) => void;
  onMove: (conversation: Conversation) => void;
  onDelete: (conversation: Conversation) => void;
  onShare: (conversation: Conversation) => void;
  onPin: (conversation: Conversation) => void;
  onArchive: (conversation: Conversation) => void;
}

function ConversationItem({
  conversation,
  activeId,
  canMove,
  onRename,
  onMove,
  onDelete,
  onShare,
  onPin,
  onArchive,
}: { conversation: Conversation } & RowActions) {
  const { t } = useTranslation('chat');
  const closeDrawer = useCloseDrawer();
  const title = conversation.title ?? t('untitled');
  const active = conversation._id === activeId;
  return (
    <li
      className={styles.item}
      data-testid="conversation-item"
      data-conversation-id={conversation._id}
      data-project-id={conversation.projectId ?? undefined}
      data-pinned={conversation.pinned || undefined}
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
      {conversation.pinned && (
        <span className={styles.pin} title={t('list.pinnedOne')}>
          <PinIcon width={14} height={14} aria-hidden="true" />
          <span className="visually-hidden">{t('list.pinnedOne')}</span>
        </span>
      )}
      <span className={styles.actions}>
        <ConversationMenu
          conversation={conversation}
          actions={{
            onRename: () => onRename(conversation),
            onPin: () => onPin(conversation),
            onShare: () => onShare(conversation),
            onMove: canMove ? () => onMove(conversation) : undefined,
            onArchive: () => onArchive(conversation),
            onDelete: () => onDelete(conversation),
          }}
        />
      </span>
    </li>
  );
}
