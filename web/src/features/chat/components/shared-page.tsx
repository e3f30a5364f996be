import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { Button } from '@/components/button';
import { buttonClassName } from '@/components/button-class-name';
import { FormAlert } from '@/components/form-alert';
import { Spinner } from '@/components/spinner';
import { openAuthDialog, selectAuthStatus, useAuthStore } from '@/features/auth';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { isApiError } from '@/lib/api-client';
import type { SharedAttachment, SharedConversation, SharedMessage } from '@/types/generated';
import { chatApi } from '../api/chat-api';
import { DocumentIcon } from './chat-icons';
import { MarkdownContent } from './markdown-content';
import { splitSources } from '../lib/split-sources';
import { WebSources } from './message-bubble';
import bubbles from './messages.module.css';
import styles from './shared-page.module.css';

type Load = { status: 'loading' } | { status: 'notFound' } | { status: 'error' } | { status: 'ready'; shared: SharedConversation };

/**
 * `/share/:token`, open to anyone with the link: the snapshot read-only, rendered as the
 * chat renders messages. "Continue this conversation" copies it into the viewer's account
 * (a guest signs in first, then it continues by itself) and opens the copy.
 */
export function SharedPage() {
  const { t, i18n } = useTranslation('chat');
  const { token = '' } = useParams();
  const navigate = useNavigate();
  const status = useAuthStore(selectAuthStatus);
  const [load, setLoad] = useState<Load>({ status: 'loading' });
  // A guest who asked to continue: once signed in, it goes on without a second click.
  const wantsContinue = useRef(false);
  const action = useAsyncAction();
  const continuing = useRef(false);

  const fetchShared = useCallback(
    () =>
      chatApi
        .getShared(token)
        .then(({ data }) => setLoad({ status: 'ready', shared: data }))
        .catch((error: unknown) =>
          setLoad({ status: isApiError(error) && (error.status === 404 || error.code === 'not_found') ? 'notFound' : 'error' }),
        ),
    [token],
  );
  useEffect(() => void fetchShared(), [fetchShared]);
  const read = () => {
    setLoad({ status: 'loading' });
    void fetchShared();
  };

  const shared = load.status === 'ready' ? load.shared : null;
  useDocumentTitle(shared ? (shared.title ?? t('untitled')) : t('shared.pageTitle'));

  const startContinue = useCallback(async () => {
    if (continuing.current) return;
    continuing.current = true;
    const ok = await action.run(async () => {
      const { data } = await chatApi.continueShared(token);
      await navigate(`/chat/${data._id}`);
    });
    if (!ok) continuing.current = false;
  }, [action, navigate, token]);

  useEffect(() => {
    if (!wantsContinue.current || status !== 'authenticated') return;
    wantsContinue.current = false;
    void startContinue();
  }, [status, startContinue]);

  const onContinue = () => {
    if (status === 'authenticated') void startContinue();
    else {
      wantsContinue.current = true;
      openAuthDialog('login');
    }
  };

  if (load.status === 'loading') {
    return (
      <div className={styles.page}>
        <Spinner label={t('shared.loading')} />
      </div>
    );
  }

  if (load.status !== 'ready') {
    const notFound = load.status === 'notFound';
    return (
      <div className={styles.page}>
        <div className={styles.missing} data-testid={notFound ? 'shared-not-found' : 'shared-error'} role={notFound ? undefined : 'alert'}>
          <h1 className={styles.title}>{notFound ? t('shared.notFoundTitle') : t('shared.loadFailed')}</h1>
          {notFound && <p>{t('shared.notFoundText')}</p>}
          <div className={styles.actions}>
            {!notFound && (
              <Button variant="secondary" onClick={read}>
                {t('actions.retry')}
              </Button>
            )}
            <Link to={status === 'authenticated' ? '/chat' : '/'} className={buttonClassName()}>
              {status === 'authenticated' ? t('shared.toChat') : t('shared.home')}
            </Link>
          </div>
        </div>
      </div>
    );
  }

  const date = new Date(load.shared.createdAt).toLocaleDateString(i18n.language, { dateStyle: 'long' });
  return (
    <div className={styles.page} data-testid="shared-page">
      <header className={styles.header}>
        <p className={styles.kicker}>{t('shared.kicker')}</p>
        <h1 className={styles.title} data-testid="shared-title">
          {load.shared.title ?? t('untitled')}
        </h1>
        <p className={styles.byline}>
          {load.shared.ownerName ? t('shared.byName', { name: load.shared.ownerName, date }) : t('shared.byAnyone', { date })}
        </p>
      </header>

      <div className={`${bubbles.log} ${styles.log}`} role="log" aria-label={t('view.messages')}>
        {load.shared.messages.map((message) => (
          <SharedBubble key={message._id} message={message} />
        ))}
      </div>

      <footer className={styles.footer}>
        <p className={styles.note}>{t('shared.readOnly')}</p>
        <FormAlert>{action.error}</FormAlert>
        <Button loading={action.pending} data-testid="shared-continue" onClick={onContinue}>
          {t('shared.continue')}
        </Button>
        {status !== 'authenticated' && <p className={styles.note}>{t('shared.signInFirst')}</p>}
      </footer>
    </div>
  );
}

function SharedBubble({ message }: { message: SharedMessage }) {
  const { t } = useTranslation('chat');
  const sources = useMemo(() => splitSources(message.sources), [message.sources]);
  const images = message.attachments.filter((a) => a.kind === 'image' && a.url);
  const documents = message.attachments.filter((a) => !(a.kind === 'image' && a.url));
  const files = (
    <>
      {images.length > 0 && (
        <div className={styles.images}>
          {images.map((image, i) => (
            <SharedImage key={i} image={image} />
          ))}
        </div>
      )}
      {documents.length > 0 && (
        <ul className={styles.documents} aria-label={t('message.documents')}>
          {documents.map((doc, i) => (
            <li key={i} className={styles.document} data-testid="shared-document">
              <DocumentIcon width={18} height={18} aria-hidden="true" />
              <span>{doc.name}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
  if (message.role === 'user') {
    return (
      <article className={`${bubbles.row} ${bubbles.userRow}`} data-testid="shared-message-user">
        <div className={styles.userStack}>
          {files}
          <div className={`${bubbles.bubble} ${bubbles.user} ${styles.userText}`}>
            <span className="visually-hidden">{t('message.you')}: </span>
            {message.content}
          </div>
        </div>
      </article>
    );
  }
  return (
    <article className={`${bubbles.row} ${bubbles.assistantRow}`} data-testid="shared-message-assistant">
      <div className={`${bubbles.bubble} ${bubbles.assistant}`}>
        <span className="visually-hidden">{t('message.assistant')}: </span>
        {message.content && <MarkdownContent source={message.content} citations={sources.citations} />}
        {files}
        {sources.documents.length > 0 && (
          <p className={styles.sources}>
            {t('message.sources')} {sources.documents.map((s) => (s.page ? `${s.name}, ${t('shared.page', { page: s.page })}` : s.name)).join(' · ')}
          </p>
        )}
        {sources.web.length > 0 && <WebSources sources={sources.web} />}
        {message.model && <span className={bubbles.meta}>{t('message.model', { model: message.model })}</span>}
      </div>
    </article>
  );
}

function SharedImage({ image }: { image: SharedAttachment }) {
  if (!image.url) return null;
  return (
    <a href={image.url} target="_blank" rel="noopener noreferrer" className={styles.imageLink}>
      <img
        src={image.url}
        alt={image.name}
        width={image.width ?? undefined}
        height={image.height ?? undefined}
        loading="lazy"
        className={styles.image}
        data-testid="shared-image"
      />
    </a>
  );
}
