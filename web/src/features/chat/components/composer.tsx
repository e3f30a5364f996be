import {
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type ChangeEvent,
  type ClipboardEvent,
  type KeyboardEvent,
} from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { toast } from '@/components/toast';
import type { Plan } from '@/types/generated';
import { DOCUMENT_ACCEPT } from '../lib/files';
import {
  allowedModels,
  attachButtonGate,
  deepSearchGate,
  documentGate,
  documentNotice,
  imageGate,
  imageGenerationGate,
  webSearchGate,
  type GateNoticeKind,
} from '../lib/gating';
import { attachFiles, isAttachable } from '../stores/attach-files';
import { isBusy, selectAttachments, useAttachmentStore } from '../stores/attachments';
import { useChatStore } from '../stores/chat';
import { AttachMenu } from './attach-menu';
import { AttachmentTray } from './attachment-tray';
import { CameraDialog } from './camera-dialog';
import { CreateImageIcon, DeepSearchIcon, LockIcon, SearchGlobeIcon, SendIcon, StopIcon } from './chat-icons';
import styles from './composer.module.css';

/** docs/protocol.md chat.send: `chat.max_message_chars`. */
export const MAX_MESSAGE_CHARS = 32000;

export type ComposerNoticeKind = GateNoticeKind;

/** The photo picker: HEIC is named too, as some browsers do not count it as `image/*`. */
export const IMAGE_ACCEPT = 'image/*,.heic,.heif';

export interface ComposerProps {
  /** Where its files are kept (stores/attachments): the conversation id, or a new chat's key (newChatKey). */
  attachmentKey: string;
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
  plan: Plan | null;
  model: string | null;
  onModelChange: (model: string) => void;
  webSearch: boolean;
  onWebSearchChange: (on: boolean) => void;
  /** Deep search for the next send (with web search). */
  deepSearch: boolean;
  onDeepSearchChange: (on: boolean) => void;
  /** "Create image" for the next send (never with web or deep search). */
  imageGeneration: boolean;
  onImageGenerationChange: (on: boolean) => void;
  /** A gated control was used: show its message. */
  onNotice: (notice: ComposerNoticeKind) => void;
  /** Ids of the notices above the composer, read with the text box. */
  describedBy?: string | undefined;
}

/** The message box with its controls: attach, web search, deep search, create image, model, send or stop. */
export function Composer(props: ComposerProps) {
  const { t } = useTranslation(['chat', 'errors']);
  const { attachmentKey, text, onTextChange, onSend, onStop, streaming, stopping, sending, plan } = props;
  const textareaRef = useRef<HTMLTextAreaElement>(null);
  const photosInput = useRef<HTMLInputElement>(null);
  const cameraInput = useRef<HTMLInputElement>(null);
  const documentsInput = useRef<HTMLInputElement>(null);
  const [cameraOpen, setCameraOpen] = useState(false);
  const hintId = useId();
  const focusRequest = useChatStore((s) => s.focusRequest);
  const attachments = useAttachmentStore(selectAttachments(attachmentKey));
  const refusal = useAttachmentStore((s) => s.refusals[attachmentKey]);
  const models = allowedModels(plan);
  const search = webSearchGate(plan);
  const deep = deepSearchGate(plan);
  const deepHint = t('composer.deepSearchHint', { count: plan?.deepSearchSearches ?? 0 });
  const documents = documentGate(plan);
  const image = imageGenerationGate(plan);
  const imageOn = image === 'available' && props.imageGeneration;
  const tooLong = text.length > MAX_MESSAGE_CHARS;
  const busy = attachments.filter(isBusy);
  const hasFiles = attachments.some((item) => item.status === 'ready');
  // Files alone make a message; the send waits until every upload has answered and every
  // document has been read (the server refuses one still being read).
  const canSend = (text.trim() !== '' || hasFiles) && busy.length === 0 && !tooLong && !streaming && !sending;

  const addFiles = (files: readonly File[]) => {
    const notice = attachFiles(attachmentKey, files, plan);
    if (notice) props.onNotice(notice);
  };

  const onDocument = () => {
    if (documents === 'available') documentsInput.current?.click();
    else {
      const notice = documentNotice(plan);
      if (notice) props.onNotice(notice);
    }
  };

  const onFilesChosen = (event: ChangeEvent<HTMLInputElement>) => {
    const files = [...(event.target.files ?? [])];
    // Cleared so that choosing the same file again still fires a change.
    event.target.value = '';
    addFiles(files);
    // Back to the text for a caption; not on a touch screen, where it would pop the keyboard up.
    if (!window.matchMedia('(pointer: coarse)').matches) textareaRef.current?.focus();
  };

  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    if (attachButtonGate(plan) !== 'menu') return;
    const files = [...event.clipboardData.files].filter(isAttachable);
    if (files.length === 0) return;
    // A copied file alone would paste nothing useful (or its file name); text copied
    // along with it, as from a web page, still pastes.
    if (!event.clipboardData.types.includes('text/plain')) event.preventDefault();
    addFiles(files);
  };

  const onCameraError = () => {
    // SPEC §8: "Error accessing camera", then the browser's own way to take or pick a photo.
    setCameraOpen(false);
    toast.negative(t('errors:cameraError'));
    cameraInput.current?.click();
  };

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
      <AttachmentTray
        items={attachments}
        refusal={refusal}
        onRemove={(localId) => useAttachmentStore.getState().remove(attachmentKey, localId)}
        onDismissRefusal={() => useAttachmentStore.getState().dismissRefusal(attachmentKey)}
      />
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
        placeholder={t(imageOn ? 'composer.imagePlaceholder' : 'composer.placeholder')}
        aria-describedby={[hintId, props.describedBy].filter(Boolean).join(' ')}
        aria-invalid={tooLong || undefined}
        onChange={(event) => onTextChange(event.target.value)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
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
        <AttachMenu
          gate={attachButtonGate(plan)}
          images={imageGate(plan) === 'available'}
          documents={documents}
          className={styles.tool}
          lockClassName={styles.lock}
          onPhotos={() => photosInput.current?.click()}
          onCamera={() => setCameraOpen(true)}
          onDocument={onDocument}
        />
        <Button
          variant="ghost"
          size="small"
          className={`${styles.tool} ${styles.toggle}`}
          aria-pressed={search === 'available' ? props.webSearch : false}
          aria-describedby={search === 'unconfigured' ? `${hintId}-search` : undefined}
          data-testid="web-search-toggle"
          data-gate={search}
          // Never pretends to work: without a search provider it stays off, and says why below.
          disabled={search === 'unknown' || search === 'unconfigured'}
          onClick={() => {
            if (search === 'premium') props.onNotice('webSearchPremium');
            else if (search === 'available') props.onWebSearchChange(!props.webSearch);
          }}
        >
          <span className={styles.toolIcon}>
            <SearchGlobeIcon width={18} height={18} />
            {search === 'premium' && <LockIcon className={styles.lockBadge} width={11} height={11} />}
          </span>
          <span className={styles.toolLabel}>{t('composer.webSearch')}</span>
        </Button>
        {deep !== 'absent' && (
          <Button
            variant="ghost"
            size="small"
            className={`${styles.tool} ${styles.toggle}`}
            aria-pressed={deep === 'available' ? props.deepSearch : false}
            aria-describedby={
              deep === 'available' ? `${hintId}-deep` : deep === 'unconfigured' ? `${hintId}-search` : undefined
            }
            title={deep === 'available' ? deepHint : undefined}
            data-testid="deep-search-toggle"
            data-gate={deep}
            disabled={deep === 'unknown' || deep === 'unconfigured'}
            onClick={() => {
              if (deep === 'premium') props.onNotice('webSearchPremium');
              else if (deep === 'available') props.onDeepSearchChange(!props.deepSearch);
            }}
          >
            <span className={styles.toolIcon}>
              <DeepSearchIcon width={18} height={18} />
              {deep === 'premium' && <LockIcon className={styles.lockBadge} width={11} height={11} />}
            </span>
            <span className={styles.toolLabel}>{t('composer.deepSearch')}</span>
          </Button>
        )}
        {image !== 'comingSoon' && (
          // A server that makes no images yet shows no toggle: it would sell what does not work.
          <Button
            variant="ghost"
            size="small"
            className={`${styles.tool} ${styles.toggle}`}
            aria-pressed={imageOn}
            data-testid="image-generation-toggle"
            data-gate={image}
            disabled={image === 'unknown'}
            onClick={() => {
              if (image === 'premium') props.onNotice('imageGenerationPremium');
              else if (image === 'available') props.onImageGenerationChange(!props.imageGeneration);
            }}
          >
            <span className={styles.toolIcon}>
              <CreateImageIcon width={18} height={18} />
              {image === 'premium' && <LockIcon className={styles.lockBadge} width={11} height={11} />}
            </span>
            <span className={styles.toolLabel}>{t('composer.createImage')}</span>
          </Button>
        )}
        {models.length > 0 && props.model && (
          // On a phone the model goes on a row of its own above the tools and send.
          <span className={styles.rowBreak} aria-hidden="true" />
        )}
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
            title={
              busy.length === 0
                ? undefined
                : t(busy.some((item) => item.kind === 'document') ? 'attach.waitForDocuments' : 'attach.waitForUploads')
            }
            disabled={!canSend}
            loading={sending}
            onClick={() => textareaRef.current?.focus()}
          >
            {!sending && <SendIcon />}
          </Button>
        )}
      </div>
      {search === 'unconfigured' && (
        <p id={`${hintId}-search`} className={styles.toolNote} data-testid="web-search-unconfigured">
          {t('gating.webSearchUnconfigured')}
        </p>
      )}
      {deep === 'available' && (
        // Said under the toolbar while deep search is on; read with the toggle always.
        <p
          id={`${hintId}-deep`}
          className={props.deepSearch ? styles.toolNote : 'visually-hidden'}
          data-testid="deep-search-hint"
        >
          {deepHint}
        </p>
      )}

      <input
        ref={photosInput}
        type="file"
        accept={IMAGE_ACCEPT}
        multiple
        hidden
        tabIndex={-1}
        data-testid="attach-photos-input"
        onChange={onFilesChosen}
      />
      <input
        ref={documentsInput}
        type="file"
        accept={DOCUMENT_ACCEPT}
        multiple
        hidden
        tabIndex={-1}
        data-testid="attach-document-input"
        onChange={onFilesChosen}
      />
      <input
        ref={cameraInput}
        type="file"
        accept={IMAGE_ACCEPT}
        capture="environment"
        hidden
        tabIndex={-1}
        data-testid="attach-camera-input"
        onChange={onFilesChosen}
      />
      {cameraOpen && (
        <CameraDialog
          open
          onClose={() => setCameraOpen(false)}
          onCapture={(file) => addFiles([file])}
          onError={onCameraError}
        />
      )}
    </form>
  );
}
