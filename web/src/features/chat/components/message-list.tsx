import { useCallback, useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { selectPlan, useSubscriptionStore } from '@/features/subscription';
import { isImageModel } from '../lib/gating';
import { assistantStatus } from '../lib/message-status';
import { useChatStore, type PendingSend } from '../stores/chat';
import type { ChatMessage, Versions } from '../stores/thread';
import { ArrowDownIcon } from './chat-icons';
import { AssistantBubble, UserBubble } from './message-bubble';
import styles from './messages.module.css';

/** Closer than this to the bottom counts as "at the bottom": new text keeps it in view. */
const STICK_THRESHOLD_PX = 64;

const NO_VERSIONS: ReadonlyMap<string, Versions> = new Map();

/** A message's versions as the bubbles take them: plain values, so their memo holds. */
function versionProps(versions: Versions | undefined) {
  if (!versions) return {};
  return {
    version: versions.index,
    versions: versions.count,
    previousVersion: versions.previous,
    nextVersion: versions.next,
  };
}

export interface MessageListProps {
  /** The branch shown, oldest first. */
  messages: readonly ChatMessage[];
  /** Every message's place among its versions (see thread.ts versionIndex). */
  versions?: ReadonlyMap<string, Versions>;
  /** The conversation shown; its messages get their actions. */
  conversationId?: string | null;
  /** An answer is being written or a send waits: no edit, no regenerate. */
  conversationBusy?: boolean;
  pending: readonly PendingSend[];
  /** The streaming answer's server was lost (see ThreadEntry.staleStream). */
  stale: boolean;
  /** Shown instead of messages when there are none (the new chat's greeting). */
  empty?: ReactNode;
  /**
   * A message to scroll to and mark for a moment (a search hit), once it is shown; `seq`
   * tells a new request from the same one again. `onFound` says it was done.
   */
  found?: { messageId: string; seq: number } | null;
  onFound?: () => void;
}

/** How long a found message stays marked. */
export const FOUND_MARK_MS = 2500;

/**
 * The messages, oldest first, in a scrolling log. It follows new text while the reader is
 * at the bottom, and stays put when they scrolled up to read (with a button back down).
 */
export function MessageList({
  messages,
  versions = NO_VERSIONS,
  conversationId = null,
  conversationBusy = false,
  pending,
  stale,
  empty,
  found = null,
  onFound,
}: MessageListProps) {
  const { t } = useTranslation('chat');
  const scrollerRef = useRef<HTMLDivElement>(null);
  const logRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [atBottom, setAtBottom] = useState(true);
  // Web search steps of answers being prepared, by message id (search.progress).
  const progress = useChatStore((s) => s.progress);
  // Image answers: this tab's image sends, and any answer by the plan's image model.
  const imageSends = useChatStore((s) => s.imageSends);
  const plan = useSubscriptionStore(selectPlan);

  const scrollToBottom = useCallback(() => {
    const scroller = scrollerRef.current;
    if (scroller) scroller.scrollTop = scroller.scrollHeight;
  }, []);

  // The user's own message always comes into view.
  const lastPending = pending[pending.length - 1]?.clientId;
  useLayoutEffect(() => {
    if (lastPending) stick.current = true;
  }, [lastPending]);

  useLayoutEffect(() => {
    if (stick.current) scrollToBottom();
  });

  // Markdown renders a moment after the text arrives, and code blocks grow: follow the
  // log's size too.
  useEffect(() => {
    const log = logRef.current;
    if (!log || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      if (stick.current) scrollToBottom();
    });
    observer.observe(log);
    return () => observer.disconnect();
  }, [scrollToBottom]);

  // A search hit: scrolled to, not followed away from (the list stops sticking to its
  // end), and marked for a moment. Done once the message is on the branch shown.
  const foundId = found?.messageId;
  const foundSeq = found?.seq;
  const shownFound = foundId !== undefined && messages.some((m) => m._id === foundId);
  useEffect(() => {
    if (!shownFound || !foundId) return;
    const element = logRef.current?.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(foundId)}"]`);
    if (!element) return;
    stick.current = false;
    setAtBottom(false);
    const tall = element.offsetHeight > (scrollerRef.current?.clientHeight ?? 0);
    element.scrollIntoView({ block: tall ? 'start' : 'center' });
    element.dataset.found = 'true';
    // Not cleared with the effect: onFound changes what it depends on at once.
    setTimeout(() => delete element.dataset.found, FOUND_MARK_MS);
    onFound?.();
    // foundSeq: the same hit chosen again scrolls again.
  }, [shownFound, foundId, foundSeq, onFound]);

  const onScroll = () => {
    const scroller = scrollerRef.current;
    if (!scroller) return;
    const near = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < STICK_THRESHOLD_PX;
    stick.current = near;
    setAtBottom(near);
  };

  const last = messages[messages.length - 1];
  const liveStatus = last?.role === 'assistant' ? assistantStatus(last, stale) : null;
  // Busy while an answer's text streams in; a search's steps before it are announced.
  const busy = liveStatus === 'streaming' && last?.content !== '';

  return (
    <div ref={scrollerRef} className={styles.scroller} onScroll={onScroll} data-scroller="">
      {messages.length === 0 && pending.length === 0 && empty ? (
        <div className={styles.empty}>{empty}</div>
      ) : (
        <div
          ref={logRef}
          className={styles.log}
          role="log"
          aria-label={t('view.messages')}
          aria-busy={busy || undefined}
        >
          {messages.map((message, depth) => {
            // A stored message's actions: in a conversation, once the server has it.
            const place = conversationId
              ? { conversationId, depth, busy: conversationBusy, ...versionProps(versions.get(message._id)) }
              : {};
            return message.role === 'user' ? (
              <UserBubble
                key={message._id}
                content={message.content}
                attachments={message.attachments}
                messageId={message._id}
                {...place}
              />
            ) : (
              <AssistantBubble
                key={message._id}
                message={message}
                stale={stale}
                progress={progress[message._id]}
                imageAnswer={
                  (message.clientId !== null && imageSends[message.clientId] === true) || isImageModel(plan, message.model)
                }
                actionsShown={message === last}
                {...place}
              />
            );
          })}
          {pending.map((send) => (
            <UserBubble key={send.clientId} content={send.content} sent={send.attachments} pending />
          ))}
        </div>
      )}
      <p role="status" className="visually-hidden">
        {liveStatus ? t(`live.${liveStatus}`) : ''}
      </p>
      {!atBottom && (
        <div className={styles.jump}>
          <Button
            variant="secondary"
            size="small"
            onClick={() => {
              stick.current = true;
              setAtBottom(true);
              scrollToBottom();
            }}
          >
            <ArrowDownIcon width={16} height={16} />
            {t('view.scrollToLatest')}
          </Button>
        </div>
      )}
    </div>
  );
}
