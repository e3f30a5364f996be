import { Fragment, memo, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import type { Attachment, DocumentSource } from '@/types/generated';
import { sourceHref, webSourceHref } from '../lib/files';
import { assistantStatus } from '../lib/message-status';
import { stepText, type SearchProgress } from '../lib/search-progress';
import { splitSources, type NumberedWebSource } from '../lib/split-sources';
import { selectEdit, useChatStore } from '../stores/chat';
import type { ChatMessage } from '../stores/thread';
import { MarkdownContent } from './markdown-content';
import { AnswerActions, EditBox, QuestionActions, type VersionProps } from './message-actions';
import { MessageDocuments } from './message-documents';
import { MessageImages, type BubbleImage } from './message-images';
import styles from './messages.module.css';

const NO_FILES: readonly Attachment[] = [];

export interface UserBubbleProps {
  content: string;
  /** The server's files of a sent message. */
  attachments?: readonly Attachment[];
  /** A pending send's files, images with their local previews (instead of `attachments`). */
  sent?: readonly BubbleImage[];
  pending?: boolean;
}

/** A stored message's place in its conversation, for its actions (none without it). */
export interface MessagePlace extends VersionProps {
  conversationId?: string;
  messageId?: string;
  /** Its index in the branch shown. */
  depth?: number;
  /** The conversation is busy: an answer is written or a send waits. */
  busy?: boolean;
  /** Its actions show without hover (the last answer; touch screens always). */
  actionsShown?: boolean;
}

/** The user's message: its images and documents above its text, each on the right, as in a messenger. */
export const UserBubble = memo(function UserBubble({
  content,
  attachments = NO_FILES,
  sent,
  pending = false,
  conversationId,
  messageId,
  depth = 0,
  busy = false,
  actionsShown = false,
  ...versions
}: UserBubbleProps & MessagePlace) {
  const { t } = useTranslation('chat');
  const editing = useChatStore(selectEdit(messageId));
  const [images, documents] = useMemo(() => {
    const files = sent ?? attachments.map((file) => ({ file }));
    const images = files.filter(({ file }) => file.kind !== 'document');
    const documents = files.filter(({ file }) => file.kind === 'document').map(({ file }) => file);
    return [images, documents] as const;
  }, [sent, attachments]);
  const actions = conversationId && messageId && !pending;
  return (
    <article
      className={`${styles.row} ${styles.userRow}`}
      data-testid="message-user"
      data-message-id={messageId}
      data-pending={pending || undefined}
      data-actions={actions && !actionsShown ? 'hover' : undefined}
    >
      <div className={styles.userStack} data-editing={editing !== undefined || undefined}>
        <span className="visually-hidden">{t('message.you')}: </span>
        {images.length > 0 && <MessageImages images={images} />}
        {documents.length > 0 && <MessageDocuments files={documents} />}
        {editing !== undefined && messageId ? (
          <EditBox messageId={messageId} text={editing} busy={busy} />
        ) : (
          content && (
            <div className={`${styles.bubble} ${styles.user}`}>
              <p className={styles.plain}>{content}</p>
              {pending && <span className={styles.meta}>{t('message.sending')}</span>}
            </div>
          )
        )}
        {pending && !content && <span className={styles.pendingNote}>{t('message.sending')}</span>}
        {actions && editing === undefined && (
          <QuestionActions conversationId={conversationId} messageId={messageId} content={content} depth={depth} {...versions} />
        )}
      </div>
    </article>
  );
});

/**
 * The documents an answer drew on: "Sources: report.pdf, p. 3 · notes.md", each opening
 * the file (a PDF at its page).
 */
export function MessageSources({ sources }: { sources: readonly DocumentSource[] }) {
  const { t } = useTranslation('chat');
  return (
    <p className={styles.sources} data-testid="message-sources">
      <span className={styles.sourcesLabel}>{t('message.sources')}</span>{' '}
      {sources.map((source, index) => (
        <Fragment key={`${source.fileId}-${source.page ?? ''}-${index}`}>
          {index > 0 && <span aria-hidden="true"> · </span>}
          <a href={sourceHref(source)} target="_blank" rel="noopener noreferrer" data-testid="message-source">
            {source.page !== null ? t('message.sourcePage', { name: source.name, page: source.page }) : source.name}
          </a>
        </Fragment>
      ))}
    </p>
  );
}


/**
 * The web pages an answer drew on, numbered as the answer cites them: "[1] Title — site",
 * the title a link to the page (http and https only; anything else is shown as text).
 */
export function WebSources({ sources }: { sources: readonly NumberedWebSource[] }) {
  const { t } = useTranslation('chat');
  return (
    <section className={styles.webSources} aria-label={t('message.webSourcesList')} data-testid="message-web-sources">
      <p className={styles.sourcesLabel} aria-hidden="true">
        {t('message.webSources')}
      </p>
      <ol className={styles.webList}>
        {sources.map(({ number, source }) => {
          const href = webSourceHref(source);
          const title = source.title.trim() || source.site || source.url;
          return (
            <li key={number} className={styles.webSource} data-testid="message-web-source" data-citation={number}>
              <span className={styles.citeNumber}>[{number}]</span>{' '}
              {href ? (
                <a href={href} target="_blank" rel="noopener noreferrer nofollow">
                  {title}
                </a>
              ) : (
                <span>{title}</span>
              )}
              {source.site && source.site !== title && <span className={styles.site}> — {source.site}</span>}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

/**
 * What a web search is doing while it prepares an answer: its latest step, or for a deep
 * search every step so far, the latest last. A polite live region.
 */
export function SearchProgressStatus({ progress }: { progress: SearchProgress }) {
  const { t } = useTranslation('chat');
  const latest = progress.steps[progress.steps.length - 1];
  if (!latest) return null;
  return (
    <div
      className={styles.progress}
      role="status"
      aria-live="polite"
      data-testid="search-progress"
      data-stage={latest.stage}
      data-deep={progress.deep || undefined}
    >
      {progress.deep ? (
        <ol className={styles.progressSteps} aria-label={t('search.deepProgress')}>
          {progress.steps.map((step, index) => (
            <li
              key={index}
              className={index === progress.steps.length - 1 ? styles.progressCurrent : undefined}
              data-testid="search-progress-step"
              data-stage={step.stage}
            >
              {stepText(step, t)}
            </li>
          ))}
        </ol>
      ) : (
        <p className={styles.progressCurrent} data-testid="search-progress-step" data-stage={latest.stage}>
          {stepText(latest, t)}
        </p>
      )}
    </div>
  );
}

/** An image answer being made: said instead of the typing dots, in a polite live region. */
export function ImageProgressStatus() {
  const { t } = useTranslation('chat');
  return (
    <p className={styles.progress} role="status" aria-live="polite" data-testid="image-progress">
      {t('message.creatingImage')}
    </p>
  );
}

export const AssistantBubble = memo(function AssistantBubble({
  message,
  stale,
  progress,
  imageAnswer = false,
  conversationId,
  depth = 0,
  busy = false,
  actionsShown = false,
  ...versions
}: {
  message: ChatMessage;
  stale: boolean;
  /** The web search preparing this answer, while it streams. */
  progress?: SearchProgress | undefined;
  /** The answer is an image being made (image generation): says so until its text comes. */
  imageAnswer?: boolean;
} & Omit<MessagePlace, 'messageId'>) {
  const { t } = useTranslation('chat');
  const status = assistantStatus(message, stale);
  const streaming = status === 'streaming';
  const sources = useMemo(() => splitSources(message.sources), [message.sources]);
  const [images, documents] = useMemo(() => {
    const files = message.attachments;
    return [
      files.filter((file) => file.kind !== 'document').map((file) => ({ file })),
      files.filter((file) => file.kind === 'document'),
    ] as const;
  }, [message.attachments]);
  const creating = streaming && imageAnswer && message.content === '';
  const searching = !creating && streaming && progress !== undefined && progress.steps.length > 0;
  const waiting = streaming && message.content === '' && !searching && !creating;
  return (
    <article
      className={`${styles.row} ${styles.assistantRow}`}
      data-testid="message-assistant"
      data-status={status}
      data-message-id={message._id}
      data-actions={conversationId && !actionsShown ? 'hover' : undefined}
      // Busy while text streams in, not while a search shows its steps (a live region).
      aria-busy={(streaming && message.content !== '') || undefined}
    >
      <div className={`${styles.bubble} ${styles.assistant}`}>
        <span className="visually-hidden">{t('message.assistant')}: </span>
        {message.content ? (
          <MarkdownContent source={message.content} citations={sources.citations} />
        ) : waiting ? (
          <span className={styles.typing} aria-hidden="true">
            <span />
            <span />
            <span />
          </span>
        ) : null}
        {waiting && <span className="visually-hidden">{t('message.writing')}</span>}
        {creating && <ImageProgressStatus />}
        {searching && <SearchProgressStatus progress={progress} />}
        {images.length > 0 && <MessageImages images={images} answer />}
        {documents.length > 0 && <MessageDocuments files={documents} />}
        {status === 'cancelled' && <p className={styles.note}>{t('message.cancelled')}</p>}
        {status === 'error' && (
          <div className={styles.failed}>
            <p className={`${styles.note} ${styles.noteError}`}>
              {stale ? t('message.interrupted') : t('message.error')}
            </p>
            {/* The answer again, as the regenerate action makes it (a new version, same model). */}
            {conversationId && (
              <Button
                size="small"
                variant="secondary"
                disabled={busy}
                data-testid="answer-retry"
                onClick={() => useChatStore.getState().regenerate(conversationId, message._id, null)}
              >
                {t('actions.retry')}
              </Button>
            )}
          </div>
        )}
        {!streaming && sources.documents.length > 0 && <MessageSources sources={sources.documents} />}
        {!streaming && sources.web.length > 0 && <WebSources sources={sources.web} />}
        {message.model && !streaming && <span className={styles.meta}>{t('message.model', { model: message.model })}</span>}
      </div>
      {conversationId && (
        <AnswerActions
          conversationId={conversationId}
          messageId={message._id}
          content={message.content}
          model={message.model}
          feedback={message.feedback}
          streaming={streaming}
          ratable={status === 'complete' || status === 'cancelled'}
          busy={busy}
          depth={depth}
          {...versions}
        />
      )}
    </article>
  );
});
