/**
 * What can be done with a message, under it: switch between its versions (`‹ 2 / 3 ›`),
 * copy its Markdown, edit a question in place, regenerate an answer (with a model menu)
 * and rate an answer (thumbs up or down, with an optional comment). Icon buttons, each
 * with an accessible name and a title, in a row that wraps rather than overflows.
 */
import { useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Menu, MenuAnchor, MenuItem, MenuItemText, MenuTitle, useMenu } from '@/components/menu';
import { toast } from '@/components/toast';
import { selectPlan, useSubscriptionStore } from '@/features/subscription';
import { errorMessage } from '@/lib/api-client';
import { MAX_FEEDBACK_CHARS, type Feedback, type Rating } from '@/types/generated';
import { useConversationActions } from '../lib/conversation-actions';
import { allowedModels } from '../lib/gating';
import { useChatStore } from '../stores/chat';
import { MAX_MESSAGE_CHARS } from './composer';
import {
  CheckIcon,
  ChevronLeftIcon,
  ChevronRightIcon,
  CopyIcon,
  PencilIcon,
  RegenerateIcon,
  ThumbDownIcon,
  ThumbUpIcon,
} from './chat-icons';
import styles from './message-actions.module.css';

/** How long "Copied" shows after a copy. */
export const COPIED_MS = 2000;

/** Where a message stands among its versions, as plain values (the bubbles are memoised). */
export interface VersionProps {
  /** From 1. */
  version?: number;
  versions?: number;
  previousVersion?: string | null;
  nextVersion?: string | null;
}

/**
 * A switch replaces the message (and its switcher) with its sibling: the sibling's
 * switcher, at the same depth of the branch, takes the focus back.
 */
let focusAfterSwitch: { depth: number; direction: 'previous' | 'next' } | null = null;

function VersionSwitcher({
  conversationId,
  depth,
  version = 1,
  versions = 1,
  previousVersion = null,
  nextVersion = null,
}: VersionProps & { conversationId: string; depth: number }) {
  const { t } = useTranslation('chat');
  const previousRef = useRef<HTMLButtonElement>(null);
  const nextRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (focusAfterSwitch?.depth !== depth) return;
    const wanted = focusAfterSwitch.direction === 'previous' ? previousRef.current : nextRef.current;
    const other = focusAfterSwitch.direction === 'previous' ? nextRef.current : previousRef.current;
    focusAfterSwitch = null;
    (wanted && !wanted.disabled ? wanted : other)?.focus();
  }, [depth]);

  const go = (id: string | null, direction: 'previous' | 'next') => {
    if (!id) return;
    focusAfterSwitch = { depth, direction };
    useChatStore.getState().selectVersion(conversationId, id);
  };

  return (
    <div
      className={styles.switcher}
      role="group"
      aria-label={t('messageActions.versions', { index: version, count: versions })}
      data-testid="version-switcher"
    >
      <button
        ref={previousRef}
        type="button"
        className={styles.icon}
        aria-label={t('messageActions.previousVersion')}
        title={t('messageActions.previousVersion')}
        disabled={!previousVersion}
        data-testid="version-previous"
        onClick={() => go(previousVersion, 'previous')}
      >
        <ChevronLeftIcon width={16} height={16} />
      </button>
      <span className={styles.versionLabel} data-testid="version-label">
        {t('messageActions.versionLabel', { index: version, count: versions })}
      </span>
      <button
        ref={nextRef}
        type="button"
        className={styles.icon}
        aria-label={t('messageActions.nextVersion')}
        title={t('messageActions.nextVersion')}
        disabled={!nextVersion}
        data-testid="version-next"
        onClick={() => go(nextVersion, 'next')}
      >
        <ChevronRightIcon width={16} height={16} />
      </button>
    </div>
  );
}

/** Copies the message's Markdown source, and says "Copied" for a moment. */
function CopyButton({ text }: { text: string }) {
  const { t } = useTranslation('chat');
  // Bumped by each copy, so a second copy shows "Copied" for its own two seconds.
  const [copied, setCopied] = useState(0);

  useEffect(() => {
    if (copied === 0) return;
    const timer = setTimeout(() => setCopied(0), COPIED_MS);
    return () => clearTimeout(timer);
  }, [copied]);

  const copy = () => {
    // Missing outside a secure context (plain http on another host than localhost).
    const clipboard = typeof navigator === 'undefined' ? undefined : navigator.clipboard;
    if (!clipboard) {
      toast.negative(t('messageActions.copyFailed'));
      return;
    }
    clipboard.writeText(text).then(
      () => setCopied((n) => n + 1),
      () => toast.negative(t('messageActions.copyFailed')),
    );
  };

  const label = t(copied ? 'messageActions.copied' : 'messageActions.copy');
  return (
    <>
      <button
        type="button"
        className={`${styles.icon} ${styles.fade}`}
        aria-label={label}
        title={label}
        data-copied={copied > 0 || undefined}
        data-testid="message-copy"
        onClick={copy}
      >
        {copied ? <CheckIcon width={16} height={16} /> : <CopyIcon width={16} height={16} />}
      </button>
      {/* Only while there is something to say: an empty region in every bubble would crowd them. */}
      {copied > 0 && (
        <span role="status" className="visually-hidden">
          {t('messageActions.copied')}
        </span>
      )}
    </>
  );
}

/**
 * Regenerate: with the plan's other chat models, a menu (the answer's own model first);
 * with none, at once. Keyboard as in a menu button: arrows move, Escape closes.
 */
function RegenerateMenu({
  conversationId,
  messageId,
  model,
  busy,
}: {
  conversationId: string;
  messageId: string;
  /** The answer's model. */
  model: string | null;
  busy: boolean;
}) {
  const { t } = useTranslation('chat');
  const plan = useSubscriptionStore(selectPlan);
  const [below, setBelow] = useState(false);
  const others = allowedModels(plan).filter((m) => m !== model);
  const menu = useMenu({ enabled: !busy, onClose: () => setBelow(false) });
  const { shown, anchorRef, menuRef } = menu;

  // It opens upwards, over the answer; where the list's top would cut it off, downwards.
  useLayoutEffect(() => {
    if (!shown) return;
    const scroller = anchorRef.current?.closest('[data-scroller]');
    const panel = menuRef.current;
    if (!panel || !scroller) return;
    if (panel.getBoundingClientRect().top < scroller.getBoundingClientRect().top) setBelow(true);
  }, [shown, anchorRef, menuRef]);

  const regenerate = (picked: string | null) => {
    menu.close(true);
    useChatStore.getState().regenerate(conversationId, messageId, picked);
  };

  const label = busy ? t('messageActions.busy') : t('messageActions.regenerate');
  return (
    <MenuAnchor {...menu.anchorProps}>
      <button
        {...menu.buttonProps}
        type="button"
        className={`${styles.icon} ${styles.fade}`}
        aria-label={t('messageActions.regenerate')}
        title={label}
        // A menu button only when there are other models to choose (busy or not).
        aria-haspopup={others.length > 0 ? 'menu' : undefined}
        aria-expanded={others.length > 0 ? shown : undefined}
        disabled={busy}
        data-testid="message-regenerate"
        onClick={() => (others.length > 0 ? menu.toggle() : regenerate(null))}
      >
        <RegenerateIcon width={16} height={16} />
      </button>
      <Menu
        {...menu.menuProps}
        label={t('messageActions.regenerateMenu')}
        placement={below ? 'below-start' : 'above-start'}
        className={styles.menu}
        data-testid="regenerate-menu"
      >
        <MenuTitle>{t('messageActions.regenerateMenu')}</MenuTitle>
        <MenuItem data-testid="regenerate-same" onClick={() => regenerate(null)}>
          <RegenerateIcon width={16} height={16} />
          <MenuItemText>{model ? t('messageActions.sameModel', { model }) : t('messageActions.sameModelUnknown')}</MenuItemText>
        </MenuItem>
        {others.map((other) => (
          <MenuItem key={other} data-testid="regenerate-model" data-model={other} onClick={() => regenerate(other)}>
            <MenuItemText>{other}</MenuItemText>
          </MenuItem>
        ))}
      </Menu>
    </MenuAnchor>
  );
}

function showError(error: unknown) {
  // Server and network failures were shown by the API client already.
  const text = errorMessage(error);
  if (text) toast.negative(text);
}

/**
 * The comment that may go with a rating: asked after a thumb is chosen; Skip keeps the
 * rating without one.
 */
function FeedbackComment({
  rating,
  initial,
  onSend,
  onSkip,
}: {
  rating: Rating;
  initial: string;
  onSend: (comment: string) => Promise<void>;
  onSkip: () => void;
}) {
  const { t } = useTranslation('chat');
  const id = useId();
  const [comment, setComment] = useState(initial);
  const [saving, setSaving] = useState(false);
  const textareaRef = useRef<HTMLTextAreaElement>(null);

  useEffect(() => textareaRef.current?.focus(), []);

  return (
    <form
      className={styles.comment}
      data-testid="feedback-comment"
      onSubmit={(event) => {
        event.preventDefault();
        if (!comment.trim()) {
          onSkip();
          return;
        }
        setSaving(true);
        void onSend(comment).finally(() => setSaving(false));
      }}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          onSkip();
        }
      }}
    >
      <label htmlFor={`${id}-comment`} className={styles.commentLabel}>
        {t('messageActions.commentLabel')}
      </label>
      <textarea
        ref={textareaRef}
        id={`${id}-comment`}
        className={styles.textarea}
        rows={2}
        maxLength={MAX_FEEDBACK_CHARS}
        value={comment}
        placeholder={t(rating === 'down' ? 'messageActions.commentPlaceholderDown' : 'messageActions.commentPlaceholderUp')}
        data-testid="feedback-comment-input"
        onChange={(event) => setComment(event.target.value)}
      />
      <div className={styles.formButtons}>
        <Button variant="secondary" size="small" data-testid="feedback-comment-skip" onClick={onSkip}>
          {t('messageActions.commentSkip')}
        </Button>
        <Button type="submit" size="small" loading={saving} disabled={!comment.trim()} data-testid="feedback-comment-send">
          {t('messageActions.commentSend')}
        </Button>
      </div>
    </form>
  );
}

/** Thumbs up and down, the chosen one pressed; choosing it again takes the rating back. */
function FeedbackButtons({
  feedback,
  onRate,
}: {
  feedback: Feedback | null;
  onRate: (rating: Rating) => void;
}) {
  const { t } = useTranslation('chat');
  const thumb = (rating: Rating) => {
    const chosen = feedback?.rating === rating;
    const label = t(rating === 'up' ? 'messageActions.good' : 'messageActions.bad');
    return (
      <button
        type="button"
        className={`${styles.icon} ${chosen ? styles.chosen : styles.fade}`}
        aria-label={label}
        title={label}
        aria-pressed={chosen}
        data-testid={rating === 'up' ? 'feedback-up' : 'feedback-down'}
        onClick={() => onRate(rating)}
      >
        {rating === 'up' ? <ThumbUpIcon width={16} height={16} /> : <ThumbDownIcon width={16} height={16} />}
      </button>
    );
  };
  return (
    <>
      {thumb('up')}
      {thumb('down')}
    </>
  );
}

export interface AnswerActionsProps extends VersionProps {
  conversationId: string;
  messageId: string;
  content: string;
  model: string | null;
  feedback: Feedback | null;
  /** Still being written: only its versions can be switched. */
  streaming: boolean;
  /** Ended well enough to be rated (not failed). */
  ratable: boolean;
  /** The conversation is busy (an answer streams, a send waits): no regenerate. */
  busy: boolean;
  /** Its place in the branch shown (for the focus after a switch). */
  depth: number;
}

/** Under an answer: versions, copy, regenerate, thumbs up and down (and the comment box). */
export function AnswerActions(props: AnswerActionsProps) {
  const { t } = useTranslation('chat');
  const { conversationId, messageId, feedback, streaming } = props;
  const [asking, setAsking] = useState<Rating | null>(null);
  const [thanks, setThanks] = useState(false);
  const versions = props.versions ?? 1;

  const rate = (rating: Rating) => {
    const next = feedback?.rating === rating ? null : rating;
    setAsking(next);
    setThanks(false);
    useChatStore
      .getState()
      .rateAnswer(conversationId, messageId, next)
      .catch((error: unknown) => {
        setAsking(null);
        showError(error);
      });
  };

  const sendComment = async (comment: string) => {
    if (!asking) return;
    try {
      await useChatStore.getState().rateAnswer(conversationId, messageId, asking, comment);
      setAsking(null);
      setThanks(true);
    } catch (error) {
      showError(error);
    }
  };

  if (streaming && versions < 2) return null;
  return (
    <>
      <div className={styles.actions} role="toolbar" aria-label={t('messageActions.actions')} data-testid="answer-actions">
        {versions > 1 && (
          <VersionSwitcher
            conversationId={conversationId}
            depth={props.depth}
            version={props.version}
            versions={versions}
            previousVersion={props.previousVersion}
            nextVersion={props.nextVersion}
          />
        )}
        {!streaming && (
          <>
            {props.content && <CopyButton text={props.content} />}
            <RegenerateMenu conversationId={conversationId} messageId={messageId} model={props.model} busy={props.busy} />
            {props.ratable && <FeedbackButtons feedback={feedback} onRate={rate} />}
          </>
        )}
      </div>
      {asking && feedback?.rating === asking && (
        <FeedbackComment
          key={asking}
          rating={asking}
          initial={feedback.comment ?? ''}
          onSend={sendComment}
          onSkip={() => setAsking(null)}
        />
      )}
      {thanks && (
        <span role="status" className="visually-hidden">
          {t('messageActions.thanks')}
        </span>
      )}
    </>
  );
}

export interface QuestionActionsProps extends VersionProps {
  conversationId: string;
  messageId: string;
  content: string;
  depth: number;
}

/** Under a question: versions, edit and copy. */
export function QuestionActions(props: QuestionActionsProps) {
  const { t } = useTranslation('chat');
  const { conversationId, messageId, content } = props;
  return (
    <div className={styles.actions} role="toolbar" aria-label={t('messageActions.actions')} data-testid="question-actions">
      {(props.versions ?? 1) > 1 && (
        <VersionSwitcher
          conversationId={conversationId}
          depth={props.depth}
          version={props.version}
          versions={props.versions}
          previousVersion={props.previousVersion}
          nextVersion={props.nextVersion}
        />
      )}
      <button
        type="button"
        className={`${styles.icon} ${styles.fade}`}
        aria-label={t('messageActions.edit')}
        title={t('messageActions.edit')}
        data-testid="message-edit"
        data-edit-for={messageId}
        onClick={() => useChatStore.getState().setEdit(messageId, content)}
      >
        <PencilIcon width={16} height={16} />
      </button>
      {content && <CopyButton text={content} />}
    </div>
  );
}

/**
 * A question edited in place: its text in a box, with Cancel and Send. Enter sends,
 * Shift+Enter is a new line, Escape cancels; an empty text is not sent.
 */
export function EditBox({ messageId, text, busy }: { messageId: string; text: string; busy: boolean }) {
  const { t } = useTranslation('chat');
  const id = useId();
  const actions = useConversationActions();
  const textareaRef = useRef<HTMLTextAreaElement>(null);
  const tooLong = text.length > MAX_MESSAGE_CHARS;
  const canSend = text.trim() !== '' && !busy && !tooLong && actions !== null;

  // Opened: the text takes the focus, the caret at its end.
  useEffect(() => {
    const textarea = textareaRef.current;
    if (!textarea) return;
    textarea.focus();
    textarea.setSelectionRange(textarea.value.length, textarea.value.length);
  }, []);

  // Grows with its text up to a limit (CSS max-height), then scrolls.
  useLayoutEffect(() => {
    const textarea = textareaRef.current;
    if (!textarea) return;
    textarea.style.height = 'auto';
    textarea.style.height = `${textarea.scrollHeight}px`;
  }, [text]);

  const cancel = () => {
    useChatStore.getState().setEdit(messageId, undefined);
    // Back to the pencil of this question, once it is shown again.
    requestAnimationFrame(() =>
      [...document.querySelectorAll<HTMLElement>('[data-edit-for]')].find((el) => el.dataset.editFor === messageId)?.focus(),
    );
  };

  const send = () => {
    if (canSend) actions.sendEdit(messageId, text);
  };

  return (
    <form
      className={styles.edit}
      data-testid="edit-box"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <label className="visually-hidden" htmlFor={`${id}-text`}>
        {t('messageActions.editLabel')}
      </label>
      <textarea
        ref={textareaRef}
        id={`${id}-text`}
        className={styles.textarea}
        data-testid="edit-input"
        rows={1}
        value={text}
        aria-describedby={`${id}-hint`}
        aria-invalid={tooLong || undefined}
        onChange={(event) => useChatStore.getState().setEdit(messageId, event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Escape') {
            event.preventDefault();
            cancel();
            return;
          }
          if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
          event.preventDefault();
          send();
        }}
      />
      <span id={`${id}-hint`} className="visually-hidden">
        {t('messageActions.editHint')}
      </span>
      {tooLong && (
        <p className={styles.tooLong} role="alert">
          {t('composer.tooLong', { max: MAX_MESSAGE_CHARS })}
        </p>
      )}
      <div className={styles.formButtons}>
        <Button variant="secondary" size="small" data-testid="edit-cancel" onClick={cancel}>
          {t('messageActions.cancel')}
        </Button>
        <Button type="submit" size="small" disabled={!canSend} title={busy ? t('messageActions.busy') : undefined} data-testid="edit-send">
          {t('messageActions.send')}
        </Button>
      </div>
    </form>
  );
}
