import { useCallback, useEffect, useId, useMemo, useRef, useState, type DragEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { Spinner } from '@/components/spinner';
import { toast } from '@/components/toast';
import { projectOf, useProjectStore } from '@/features/projects';
import { selectPlan, useSubscriptionStore } from '@/features/subscription';
import { useChatSocket, useOpenConversation } from '@/hooks/use-chat-socket';
import { useDocumentTitle } from '@/hooks/use-document-title';
import {
  attachButtonGate,
  deepSearchGate,
  defaultModel,
  documentGate,
  imageGenerationGate,
  offersRetry,
  resolveModel,
  webSearchGate,
} from '../lib/gating';
import { ConversationActionsContext, type ConversationActions } from '../lib/conversation-actions';
import { attachFiles } from '../stores/attach-files';
import { sendable, useAttachmentStore } from '../stores/attachments';
import {
  DEFAULT_OPTIONS,
  newChatKey,
  selectDraft,
  selectError,
  selectFound,
  selectListed,
  selectOptions,
  selectRegenerating,
  selectStopping,
  selectThread,
  useChatStore,
  type PendingSend,
} from '../stores/chat';
import { FolderIcon, ShareIcon } from './chat-icons';
import { EMPTY_THREAD, onOtherBranch, pathTo, streamingMessage, versionIndex, visiblePath } from '../stores/thread';
import { Composer, type ComposerNoticeKind } from './composer';
import { ChatErrorNotice, GateNotice, UsageCounter } from './composer-notices';
import styles from './conversation-view.module.css';
import { MessageList } from './message-list';
import { ShareDialog } from './share-dialog';

/**
 * No delta and no end for this long while an answer shows streaming: ask again
 * (docs/protocol.md: `model.timeout_secs`, 60 s, "and a few seconds more").
 */
export const STREAM_WATCHDOG_MS = 65_000;

const NARROW = '(max-width: 768px)';

/** After a new chat got its conversation, its view takes the focus even on a phone. */
let focusNextView = false;

const carriesFiles = (event: DragEvent | globalThis.DragEvent) => event.dataTransfer?.types.includes('Files') ?? false;

/**
 * One conversation (or the new chat, possibly in a project): its messages, then the
 * composer with its notices.
 */
export function ConversationView({
  conversationId,
  projectId = null,
}: {
  conversationId: string | null;
  /** A new chat whose conversation starts in this project (ignored with a conversationId). */
  projectId?: string | null;
}) {
  const { t } = useTranslation('chat');
  const navigate = useNavigate();
  const { emit } = useChatSocket();
  const noticeId = useId();
  const newInProject = conversationId ? null : projectId;
  const key = conversationId ?? newChatKey(newInProject);

  useOpenConversation(conversationId);

  const entry = useChatStore(selectThread(conversationId));
  const allPending = useChatStore((s) => s.pending);
  const draft = useChatStore(selectDraft(key));
  const error = useChatStore(selectError(key));
  const options = useChatStore(selectOptions(key)) ?? DEFAULT_OPTIONS;
  const stopping = useChatStore(selectStopping(conversationId));
  const plan = useSubscriptionStore(selectPlan);
  const usage = useSubscriptionStore((s) => s.usage);
  const [notice, setNotice] = useState<ComposerNoticeKind | null>(null);
  const [sentClientId, setSentClientId] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const [sharing, setSharing] = useState(false);
  // A search hit in this conversation, to show on its branch and scroll to.
  const found = useChatStore(selectFound(conversationId));
  // dragenter and dragleave fire for every child crossed: count to know when it left.
  const dragDepth = useRef(0);
  const createdId = useChatStore((s) => (sentClientId ? s.createdFor[sentClientId] : undefined));

  const thread = entry?.messages ?? EMPTY_THREAD;
  const currentId = entry?.currentId ?? null;
  const stale = entry?.staleStream ?? false;
  // An answer of any branch: the conversation takes no send or regenerate meanwhile.
  const streaming = stale ? undefined : streamingMessage(thread);
  const regenerating = useChatStore(selectRegenerating(conversationId));
  const pending = useMemo(
    () =>
      Object.values(allPending)
        .filter((send: PendingSend) => send.conversationId === conversationId)
        .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1)),
    [allPending, conversationId],
  );
  // The branch shown: the current message's, or while an edit of this tab waits for the
  // server, the branch it will hang on (the pending question shows under it).
  const pendingEdit = pending.findLast((send) => send.editOf !== undefined);
  const messages = useMemo(
    () => (pendingEdit ? pathTo(thread, pendingEdit.parentId) : null) ?? visiblePath(thread, currentId),
    [thread, currentId, pendingEdit],
  );
  const versions = useMemo(() => versionIndex(thread), [thread]);
  const listed = useChatStore(selectListed(conversationId));
  const conversation = entry?.conversation ?? listed ?? null;
  const projects = useProjectStore((s) => s.projects);
  const projectsStatus = useProjectStore((s) => s.status);
  // The project the conversation is in, or the new chat starts in.
  const project = newInProject ? (projects.find((p) => p._id === newInProject) ?? null) : projectOf(projects, conversation);
  const model = resolveModel(options.model, defaultModel(plan, conversation?.model, messages), plan);
  // "Create image" goes alone: while it is on, no web or deep search is sent or shown.
  const imageGeneration = options.imageGeneration && imageGenerationGate(plan) === 'available';
  const searchAvailable = webSearchGate(plan) === 'available' && !imageGeneration;
  const deepSearch = options.deepSearch && deepSearchGate(plan) === 'available' && !imageGeneration;
  // Deep search is a web search too: on with it, whatever the web search toggle was.
  const webSearch = (options.webSearch || deepSearch) && searchAvailable;
  const status = entry?.status;

  useDocumentTitle(conversation?.title ?? t('title'));

  // Typing is what a view is for; on a phone only when asked (the keyboard covers half of it).
  useEffect(() => {
    if (!window.matchMedia(NARROW).matches || focusNextView) useChatStore.getState().requestComposerFocus();
    focusNextView = false;
  }, []);

  // Shown: conversation.open went first (useOpenConversation), then the REST load.
  useEffect(() => {
    if (!conversationId) return;
    const chat = useChatStore.getState();
    chat.setShown(conversationId);
    void chat.loadThread(conversationId);
    return () => {
      if (useChatStore.getState().shownId === conversationId) useChatStore.getState().setShown(null);
    };
  }, [conversationId]);

  // The new chat's first send created its conversation: show it there.
  useEffect(() => {
    if (conversationId || !createdId) return;
    focusNextView = true;
    void navigate(`/chat/${createdId}`, { replace: true });
  }, [conversationId, createdId, navigate]);

  // Deleted (here or in another tab): back to a new chat.
  useEffect(() => {
    if (status !== 'deleted' || !conversationId) return;
    if (!useChatStore.getState().deletedHere[conversationId]) toast.info(t('delete.deletedElsewhere'));
    void navigate('/chat', { replace: true });
  }, [status, conversationId, navigate, t]);

  // The new chat's project is gone (deleted here, in another tab, or never the user's):
  // a new chat outside any project instead.
  const projectMissing = newInProject !== null && projectsStatus === 'ready' && project === null;
  useEffect(() => {
    if (!projectMissing || !newInProject) return;
    if (!useProjectStore.getState().deletedHere[newInProject]) toast.info(t('projects.notFound'));
    void navigate('/chat', { replace: true });
  }, [projectMissing, newInProject, navigate, t]);

  // An answer that shows streaming but stopped moving: ask the server again.
  // A hit on another branch: that branch is picked, here at once and in every tab (as the
  // version switcher does). A message that is gone is given up.
  useEffect(() => {
    if (!found || !conversationId || status !== 'ready') return;
    if (onOtherBranch(thread, currentId, found.messageId)) {
      useChatStore.getState().selectVersion(conversationId, found.messageId);
    } else if (!thread.some((m) => m._id === found.messageId)) {
      useChatStore.getState().clearFound();
    }
  }, [found, conversationId, status, thread, currentId]);
  const clearFound = useCallback(() => useChatStore.getState().clearFound(), []);

  const streamingId = streaming?._id;
  const lastActivity = entry?.lastActivity ?? 0;
  useEffect(() => {
    if (!conversationId || !streamingId) return;
    const wait = Math.max(1000, lastActivity + STREAM_WATCHDOG_MS - Date.now());
    const timer = setTimeout(() => {
      emit('conversation.open', { conversationId });
      void useChatStore.getState().loadThread(conversationId);
    }, wait);
    return () => clearTimeout(timer);
  }, [conversationId, streamingId, lastActivity, emit]);

  // A file dropped beside the drop area would make the browser leave the chat to show it.
  useEffect(() => {
    const swallow = (event: globalThis.DragEvent) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      if (event.type === 'drop') {
        dragDepth.current = 0;
        setDragging(false);
      }
    };
    window.addEventListener('dragover', swallow);
    window.addEventListener('drop', swallow);
    return () => {
      window.removeEventListener('dragover', swallow);
      window.removeEventListener('drop', swallow);
    };
  }, []);

  // An edited question goes with the composer's model and web search.
  const sendEdit = useCallback(
    (messageId: string, text: string) => {
      if (!conversationId) return false;
      const clientId = useChatStore.getState().send({ conversationId, content: text.trim(), model, webSearch, editOf: messageId });
      return clientId !== null;
    },
    [conversationId, model, webSearch],
  );
  const actions = useMemo<ConversationActions | null>(
    () => (conversationId ? { conversationId, sendEdit } : null),
    [conversationId, sendEdit],
  );

  // Something to send again: the text, or images and documents ready to go.
  const attachmentItems = useAttachmentStore((s) => s.items[key]);
  const canResend = draft.trim() !== '' || sendable(attachmentItems ?? []).length > 0;

  const send = () => {
    setNotice(null);
    const attachments = sendable(useAttachmentStore.getState().items[key] ?? []);
    const clientId = useChatStore
      .getState()
      .send({
        conversationId,
        content: draft.trim(),
        model,
        webSearch,
        deepSearch,
        imageGeneration,
        attachments,
        projectId: newInProject,
      });
    // The previews move on to the pending message; the composer starts empty.
    if (clientId) useAttachmentStore.getState().handOver(key);
    if (clientId && !conversationId) setSentClientId(clientId);
  };

  // A drop goes the way of the picker: into the composer, or the premium notice.
  const onDropFiles = (files: File[]) => {
    const shown = attachFiles(key, files, plan);
    if (shown) setNotice(shown);
  };

  const dropHandlers = {
    onDragEnter: (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      dragDepth.current += 1;
      setDragging(true);
    },
    onDragOver: (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'copy';
    },
    onDragLeave: (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      dragDepth.current = Math.max(0, dragDepth.current - 1);
      if (dragDepth.current === 0) setDragging(false);
    },
    onDrop: (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      dragDepth.current = 0;
      setDragging(false);
      onDropFiles([...event.dataTransfer.files]);
    },
  };

  if (conversationId && (status === 'notFound' || status === 'error')) {
    return (
      <section className={styles.view}>
        <div className={styles.state} role={status === 'error' ? 'alert' : undefined}>
          <p>{t(status === 'notFound' ? 'view.notFound' : 'view.loadFailed')}</p>
          <div className={styles.stateActions}>
            {status === 'error' && (
              <Button variant="secondary" onClick={() => void useChatStore.getState().loadThread(conversationId)}>
                {t('actions.retry')}
              </Button>
            )}
            <Button onClick={() => void navigate('/chat')}>{t('view.startNew')}</Button>
          </div>
        </div>
      </section>
    );
  }

  const loading = conversationId !== null && (!entry || (status === 'loading' && thread.length === 0));
  const noticeIds = [error && `${noticeId}-error`, notice && `${noticeId}-notice`].filter(Boolean).join(' ');

  return (
    <section
      className={styles.view}
      aria-labelledby={`${noticeId}-title`}
      data-testid="conversation-view"
      data-dragging={dragging || undefined}
      {...dropHandlers}
    >
      {dragging && attachButtonGate(plan) === 'menu' && (
        <div className={styles.dropOverlay} aria-hidden="true" data-testid="drop-overlay">
          <p>{t(documentGate(plan) === 'available' ? 'attach.dropHereWithDocuments' : 'attach.dropHere')}</p>
        </div>
      )}
      <header className={styles.header}>
        <h2 id={`${noticeId}-title`} className={styles.title} data-testid="conversation-title">
          {conversationId
            ? (conversation?.title ?? t('untitled'))
            : project
              ? t('projects.newChatIn', { name: project.name })
              : t('newChat')}
        </h2>
        {conversation?.archived && (
          <span className={styles.archived} data-testid="conversation-archived">
            {t('find.archived')}
          </span>
        )}
        {conversationId && project && (
          <span className={styles.project} data-testid="conversation-project" title={t('projects.inProject', { name: project.name })}>
            <FolderIcon width={14} height={14} />
            <span className="visually-hidden">{t('projects.inProject', { name: project.name })}</span>
            <span className={styles.projectName} aria-hidden="true">
              {project.name}
            </span>
          </span>
        )}
        {conversation && messages.length > 0 && (
          <Button
            variant="ghost"
            size="small"
            className={styles.share}
            data-testid="share-button"
            aria-label={t('share.open', { title: conversation.title ?? t('untitled') })}
            onClick={() => setSharing(true)}
          >
            <ShareIcon width={16} height={16} />
            <span className={styles.shareLabel}>{t('menu.share')}</span>
          </Button>
        )}
      </header>
      {sharing && conversation && <ShareDialog conversation={conversation} onClose={() => setSharing(false)} />}

      {loading ? (
        <div className={styles.state}>
          <Spinner label={t('view.loading')} />
        </div>
      ) : (
        <ConversationActionsContext.Provider value={actions}>
          <MessageList
            messages={messages}
            versions={versions}
            conversationId={conversationId}
            conversationBusy={streaming !== undefined || pending.length > 0 || regenerating}
            pending={pending}
            stale={stale}
            found={found}
            onFound={clearFound}
            empty={
              conversationId ? undefined : (
                <>
                  <h3 className={styles.greeting}>{t('view.emptyTitle')}</h3>
                  <p data-testid="new-chat-hint">
                    {project ? t('projects.newChatHint', { name: project.name }) : t('view.emptyHint')}
                  </p>
                </>
              )
            }
          />
        </ConversationActionsContext.Provider>
      )}

      <div className={styles.bottom}>
        {error && (
          <ChatErrorNotice
            id={`${noticeId}-error`}
            error={error}
            onDismiss={() => useChatStore.getState().setError(key, undefined)}
            // The refused question is back in the composer: "Try again" sends it as it is.
            onRetry={error.resend && offersRetry(error.code) && canResend ? send : undefined}
            retryDisabled={streaming !== undefined || pending.length > 0}
          />
        )}
        {notice && <GateNotice id={`${noticeId}-notice`} kind={notice} onDismiss={() => setNotice(null)} />}
        <Composer
          key={key}
          attachmentKey={key}
          text={draft}
          onTextChange={(text) => useChatStore.getState().setDraft(key, text)}
          onSend={send}
          onStop={() => {
            if (conversationId) useChatStore.getState().cancel(conversationId);
          }}
          streaming={streaming !== undefined}
          stopping={stopping}
          sending={pending.length > 0}
          plan={plan}
          model={model}
          onModelChange={(picked) => useChatStore.getState().setOptions(key, { model: picked })}
          webSearch={webSearch}
          // Web search off ends deep search too; deep search on turns web search on. Either
          // on ends "Create image", and "Create image" on ends both (the server takes one).
          onWebSearchChange={(on) =>
            useChatStore
              .getState()
              .setOptions(key, on ? { webSearch: true, imageGeneration: false } : { webSearch: false, deepSearch: false })
          }
          deepSearch={deepSearch}
          onDeepSearchChange={(on) =>
            useChatStore
              .getState()
              .setOptions(key, on ? { deepSearch: true, webSearch: true, imageGeneration: false } : { deepSearch: false })
          }
          imageGeneration={imageGeneration}
          onImageGenerationChange={(on) =>
            useChatStore
              .getState()
              .setOptions(key, on ? { imageGeneration: true, webSearch: false, deepSearch: false } : { imageGeneration: false })
          }
          onNotice={setNotice}
          describedBy={noticeIds || undefined}
        />
        <UsageCounter usage={usage} />
      </div>
    </section>
  );
}
