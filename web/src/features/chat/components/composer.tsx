import { useEffect, useId, useLayoutEffect, useRef, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import type { ChatPlan } from '../api/chat-api';
import { allowedModels, attachmentGate, webSearchGate } from '../lib/gating';
import { useChatStore } from '../stores/chat-store';
import { LockIcon, PaperclipIcon, SearchGlobeIcon, SendIcon, StopIcon } from './chat-icons';
import styles from './composer.module.css';

/** docs/protocol.md chat.send: `chat.max_message_chars`. */
export const MAX_MESSAGE_CHARS = 32000;

export type ComposerNoticeKind = 'webSearchPremium' | 'documentUploadPremium' | 'attachmentsComingSoon';

export interface ComposerProps {
  text: string;
  onTextChange: (text: string) => void;
  onSend: () => void;
  onStop: () => void;
  /** An answer is being written here: the stop button replaces send. */
  streaming: boolean;
  /** A stop was asked; waiting for the answer's end. */
  stopping: boolean;
  /** A send waits for the server's first answer. */
  sending: boolean;
  plan: ChatPlan | null;
  model: string | null;
  onModelChange: (model: string) => void;
  webSearch: boolean;
  onWebSearchChange: (on: boolean) => void;
  /** A gated control was used: show its message. */
  onNotice: (notice: ComposerNoticeKind) => void;
  /** Ids of the notices above the composer, read with the text box. */
  describedBy?: string | undefined;
}

/** The message box with its controls: attach, web search, model, send or stop. */
export function Composer(props: ComposerProps) {
  const { t } = useTranslation('chat');
  const { text, onTextChange, onSend, onStop, streaming, stopping, sending, plan } = props;
  const textareaRef = useRef<HTMLTextAreaElement>(null);
  const hintId = useId();
  const focusRequest = useChatStore((s) => s.focusRequest);
  const models = allowedModels(plan);
  const search = webSearchGate(plan);
  const attach = attachmentGate(plan);
  const tooLong = text.length > MAX_MESSAGE_CHARS;
  const canSend = text.trim() !== '' && !tooLong && !streaming && !sending;

  // Grows with its text up to a limit (CSS max-height), then scrolls.
  useLayoutEffect(() => {
    const textarea = textareaRef.current;
    if (!textarea) return;
    textarea.style.height = 'auto';
    textarea.style.height = `${textarea.scrollHeight}px`;
  }, [text]);

  // Asked for by "new chat" or a newly shown conversation (not by requests made before).
  const seenFocusRequest = useRef(focusRequest);
  useEffect(() => {
    if (focusRequest === seenFocusRequest.current) return;
    seenFocusRequest.current = focusRequest;
    textareaRef.current?.focus();
  }, [focusRequest]);

  const send = () => {
    if (canSend) onSend();
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter sends, Shift+Enter is a new line; Enter that ends an IME composition is neither.
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    send();
  };

  return (
    <form
      className={styles.composer}
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <label className="visually-hidden" htmlFor={`${hintId}-input`}>
        {t('composer.label')}
      </label>
      <textarea
        ref={textareaRef}
        id={`${hintId}-input`}
        className={styles.input}
        data-testid="composer-input"
        data-composer-input=""
        rows={1}
        value={text}
        placeholder={t('composer.placeholder')}
        aria-describedby={[hintId, props.describedBy].filter(Boolean).join(' ')}
        aria-invalid={tooLong || undefined}
        onChange={(event) => onTextChange(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <span id={hintId} className="visually-hidden">
        {t('composer.hint')}
      </span>
      {tooLong && (
        <p className={styles.tooLong} role="alert">
          {t('composer.tooLong', { max: MAX_MESSAGE_CHARS })}
        </p>
      )}

      <div className={styles.toolbar} role="group" aria-label={t('composer.options')}>
        <Button
          variant="ghost"
          iconOnly
          className={styles.tool}
          aria-label={t('composer.attach')}
          data-testid="attach-button"
          data-gate={attach}
          disabled={attach === 'unknown'}
          onClick={() => {
            if (attach === 'premium') props.onNotice('documentUploadPremium');
            else if (attach === 'comingSoon') props.onNotice('attachmentsComingSoon');
          }}
        >
          <PaperclipIcon />
          {attach === 'premium' && <LockIcon className={styles.lock} width={12} height={12} />}
        </Button>
        <Button
          variant="ghost"
          size="small"
          className={`${styles.tool} ${styles.toggle}`}
          aria-pressed={search === 'available' ? props.webSearch : false}
          data-testid="web-search-toggle"
          data-gate={search}
          disabled={search === 'unknown'}
          onClick={() => {
            if (search === 'premium') props.onNotice('webSearchPremium');
            else if (search === 'available') props.onWebSearchChange(!props.webSearch);
          }}
        >
          <SearchGlobeIcon width={18} height={18} />
          <span className={styles.toolLabel}>{t('composer.webSearch')}</span>
          {search === 'premium' && <LockIcon className={styles.lockInline} width={12} height={12} />}
        </Button>
        {models.length > 0 && props.model && (
          <select
            className={styles.model}
            aria-label={t('composer.model')}
            data-testid="model-select"
            value={props.model}
            onChange={(event) => props.onModelChange(event.target.value)}
          >
            {models.map((model) => (
              <option key={model} value={model}>
                {model}
              </option>
            ))}
          </select>
        )}
        <span className={styles.spacer} />
        {streaming ? (
          <Button
            variant="secondary"
            iconOnly
            className={styles.action}
            aria-label={t('composer.stop')}
            data-testid="stop-button"
            loading={stopping}
            onClick={() => {
              onStop();
              textareaRef.current?.focus();
            }}
          >
            {!stopping && <StopIcon />}
          </Button>
        ) : (
          <Button
            type="submit"
            iconOnly
            className={styles.action}
            aria-label={t('composer.send')}
            data-testid="send-button"
            disabled={!canSend}
            loading={sending}
            onClick={() => textareaRef.current?.focus()}
          >
            {!sending && <SendIcon />}
          </Button>
        )}
      </div>
    </form>
  );
}
