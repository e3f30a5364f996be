import { Fragment, memo, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import type { MessageSource, StoredFile } from '@/types/api';
import { sourceHref } from '../lib/files';
import { assistantStatus } from '../lib/message-status';
import type { ChatMessage } from '../stores/thread';
import { MarkdownContent } from './markdown-content';
import { MessageDocuments } from './message-documents';
import { MessageImages, type BubbleImage } from './message-images';
import styles from './messages.module.css';

const NO_FILES: readonly StoredFile[] = [];

export interface UserBubbleProps {
  content: string;
  /** The server's files of a sent message. */
  attachments?: readonly StoredFile[];
  /** A pending send's files, images with their local previews (instead of `attachments`). */
  sent?: readonly BubbleImage[];
  pending?: boolean;
}

/** The user's message: its images and documents above its text, each on the right, as in a messenger. */
export const UserBubble = memo(function UserBubble({ content, attachments = NO_FILES, sent, pending = false }: UserBubbleProps) {
  const { t } = useTranslation('chat');
  const [images, documents] = useMemo(() => {
    const files = sent ?? attachments.map((file) => ({ file }));
    const images = files.filter(({ file }) => file.kind !== 'document');
    const documents = files.filter(({ file }) => file.kind === 'document').map(({ file }) => file);
    return [images, documents] as const;
  }, [sent, attachments]);
  return (
    <article className={`${styles.row} ${styles.userRow}`} data-testid="message-user" data-pending={pending || undefined}>
      <div className={styles.userStack}>
        <span className="visually-hidden">{t('message.you')}: </span>
        {images.length > 0 && <MessageImages images={images} />}
        {documents.length > 0 && <MessageDocuments files={documents} />}
        {content && (
          <div className={`${styles.bubble} ${styles.user}`}>
            <p className={styles.plain}>{content}</p>
            {pending && <span className={styles.meta}>{t('message.sending')}</span>}
          </div>
        )}
        {pending && !content && <span className={styles.pendingNote}>{t('message.sending')}</span>}
      </div>
    </article>
  );
});

/**
 * The documents an answer drew on: "Sources: report.pdf, p. 3 · notes.md", each opening
 * the file (a PDF at its page).
 */
export function MessageSources({ sources }: { sources: readonly MessageSource[] }) {
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

export const AssistantBubble = memo(function AssistantBubble({
  message,
  stale,
}: {
  message: ChatMessage;
  stale: boolean;
}) {
  const { t } = useTranslation('chat');
  const status = assistantStatus(message, stale);
  const streaming = status === 'streaming';
  return (
    <article
      className={`${styles.row} ${styles.assistantRow}`}
      data-testid="message-assistant"
      data-status={status}
      data-message-id={message._id}
      aria-busy={streaming || undefined}
    >
      <div className={`${styles.bubble} ${styles.assistant}`}>
        <span className="visually-hidden">{t('message.assistant')}: </span>
        {message.content ? (
          <MarkdownContent source={message.content} />
        ) : streaming ? (
          <span className={styles.typing} aria-hidden="true">
            <span />
            <span />
            <span />
          </span>
        ) : null}
        {streaming && message.content === '' && <span className="visually-hidden">{t('message.writing')}</span>}
        {status === 'cancelled' && <p className={styles.note}>{t('message.cancelled')}</p>}
        {status === 'error' && (
          <p className={`${styles.note} ${styles.noteError}`}>
            {stale ? t('message.interrupted') : t('message.error')}
          </p>
        )}
        {!streaming && message.sources && message.sources.length > 0 && <MessageSources sources={message.sources} />}
        {message.model && !streaming && <span className={styles.meta}>{t('message.model', { model: message.model })}</span>}
      </div>
    </article>
  );
});
