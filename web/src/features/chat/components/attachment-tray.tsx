import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { CloseIcon } from '@/components/icons';
import { Spinner } from '@/components/spinner';
import { formatFileSize } from '../lib/files';
import { isBusy, type AttachmentError, type AttachmentRefusal, type ComposerAttachment } from '../stores/attachments';
import { AlertIcon, DocumentIcon, ImageIcon } from './chat-icons';
import styles from './attachment-tray.module.css';

export interface AttachmentTrayProps {
  items: readonly ComposerAttachment[];
  refusal: AttachmentRefusal | undefined;
  onRemove: (localId: string) => void;
  onDismissRefusal: () => void;
}

function useErrorText() {
  const { t } = useTranslation(['chat', 'errors']);
  return (error: AttachmentError | null) => {
    if (error?.kind === 'heic') return t('errors:heicConversionError');
    if (error?.kind === 'optimize') return t('errors:imageOptimizationFailed');
    if (error?.kind === 'unreadable') return t('chat:attach.unreadable');
    if (error?.kind === 'tooLarge') return t('chat:attach.documentTooLarge', { max: error.max });
    return (error?.kind === 'upload' && error.message) || t('errors:fileUploadError');
  };
}

function refusalText(t: TFunction<'chat'>, refusal: AttachmentRefusal): string {
  switch (refusal.kind) {
    case 'tooMany':
      return t('attach.tooMany', { max: refusal.max });
    case 'tooManyDocuments':
      return t('attach.tooManyDocuments', { max: refusal.max });
    default:
      return t(refusal.documents ? 'attach.unsupportedWithDocuments' : 'attach.unsupported');
  }
}

/** An image in the tray: its preview, a spinner while it is prepared and uploaded. */
function ImagePreview({ item, errorText }: { item: ComposerAttachment; errorText: (error: AttachmentError | null) => string }) {
  const { t } = useTranslation('chat');
  const failed = item.status === 'error';
  return (
    <div className={styles.frame} data-failed={failed || undefined} title={failed ? errorText(item.error) : undefined}>
      {item.previewUrl ? (
        <img className={styles.image} src={item.previewUrl} alt={item.name} />
      ) : (
        <ImageIcon className={styles.placeholder} width={24} height={24} />
      )}
      {isBusy(item) && (
        <span className={styles.overlay}>
          <Spinner
            size="small"
            label={t(item.status === 'preparing' ? 'attach.preparing' : 'attach.uploading', { name: item.name })}
          />
        </span>
      )}
      {failed && (
        <span className={`${styles.overlay} ${styles.failedOverlay}`}>
          <AlertIcon width={22} height={22} />
        </span>
      )}
    </div>
  );
}

/**
 * A document in the tray: its name, then how far it is (uploading, a progress bar while
 * the server reads it, its pages and size once ready). A failure's reason is written
 * below the row, as for images.
 */
function DocumentChip({ item }: { item: ComposerAttachment }) {
  const { t, i18n } = useTranslation('chat');
  const failed = item.status === 'error';
  const progress = item.file?.progress ?? 0;
  const percent = new Intl.NumberFormat(i18n.language, { style: 'percent' }).format(progress / 100);
  const pages = item.file?.pages;
  return (
    <div className={styles.document} data-failed={failed || undefined}>
      {failed ? (
        <AlertIcon className={styles.documentIcon} width={22} height={22} />
      ) : (
        <DocumentIcon className={styles.documentIcon} width={22} height={22} />
      )}
      <div className={styles.documentText}>
        <span className={styles.documentName} title={item.name}>
          {item.name}
        </span>
        {(item.status === 'uploading' || item.status === 'preparing') && (
          <span className={styles.documentMeta}>
            <Spinner size="small" label={t('attach.uploading', { name: item.name })} />
          </span>
        )}
        {item.status === 'processing' && (
          <span className={styles.documentMeta}>
            <span
              className={styles.progress}
              role="progressbar"
              aria-label={t('attach.processing', { name: item.name })}
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={progress}
              data-testid="attachment-progress"
            >
              <span className={styles.progressBar} style={{ width: `${progress}%` }} />
            </span>
            <span className={styles.percent} aria-hidden="true">
              {percent}
            </span>
          </span>
        )}
        {item.status === 'ready' && (
          <span className={styles.documentMeta}>
            {[pages ? t('attach.pages', { count: pages }) : null, formatFileSize(item.size, i18n.language)]
              .filter(Boolean)
              .join(' · ')}
          </span>
        )}
      </div>
    </div>
  );
}

/** The composer's picked files: a preview (image) or chip (document) each with its state and a remove button. */
export function AttachmentTray({ items, refusal, onRemove, onDismissRefusal }: AttachmentTrayProps) {
  const { t } = useTranslation('chat');
  const errorText = useErrorText();
  if (items.length === 0 && !refusal) return null;
  const failures = items.filter((item) => item.status === 'error');
  return (
    <div className={styles.tray}>
      {items.length > 0 && (
        <ul className={styles.list} aria-label={t('attach.attached')} data-testid="attachment-tray">
          {items.map((item) => {
            return (
              <li
                key={item.localId}
                className={styles.item}
                data-testid="attachment-preview"
                data-kind={item.kind}
                data-status={item.status}
                data-file-id={item.file?._id}
                aria-busy={isBusy(item) || undefined}
              >
                {item.kind === 'document' ? (
                  <DocumentChip item={item} />
                ) : (
                  <ImagePreview item={item} errorText={errorText} />
                )}
                <Button
                  variant="secondary"
                  size="small"
                  iconOnly
                  className={styles.remove}
                  aria-label={t('attach.remove', { name: item.name })}
                  data-testid="attachment-remove"
                  onClick={() => onRemove(item.localId)}
                >
                  <CloseIcon width={14} height={14} />
                </Button>
              </li>
            );
          })}
        </ul>
      )}
      {failures.length > 0 && (
        // Below the row, where a server's sentence has room to wrap at 360 px.
        <ul className={styles.errors} role="alert">
          {failures.map((item) => (
            <li key={item.localId} data-testid="attachment-error">
              <span className={styles.errorName}>{t('attach.failed', { name: item.name })}:</span> {errorText(item.error)}
            </li>
          ))}
        </ul>
      )}
      {refusal && (
        <div className={styles.refusal} role="alert" data-testid="attachment-refusal" data-kind={refusal.kind}>
          <p className={styles.refusalText}>{refusalText(t, refusal)}</p>
          <Button variant="ghost" size="small" iconOnly aria-label={t('errors.dismiss')} onClick={onDismissRefusal}>
            <CloseIcon width={14} height={14} />
          </Button>
        </div>
      )}
    </div>
  );
}
