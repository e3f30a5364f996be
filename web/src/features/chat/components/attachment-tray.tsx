import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { CloseIcon } from '@/components/icons';
import { Spinner } from '@/components/spinner';
import type { AttachmentError, AttachmentRefusal, ComposerAttachment } from '../stores/attachment-store';
import { AlertIcon, ImageIcon } from './chat-icons';
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
    return (error?.kind === 'upload' && error.message) || t('errors:fileUploadError');
  };
}

/** The composer's picked images: a preview each with its state and a remove button. */
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
            const busy = item.status === 'preparing' || item.status === 'uploading';
            const failed = item.status === 'error';
            return (
              <li
                key={item.localId}
                className={styles.item}
                data-testid="attachment-preview"
                data-status={item.status}
                data-file-id={item.file?._id}
                aria-busy={busy || undefined}
              >
                <div className={styles.frame} data-failed={failed || undefined} title={failed ? errorText(item.error) : undefined}>
                  {item.previewUrl ? (
                    <img className={styles.image} src={item.previewUrl} alt={item.name} />
                  ) : (
                    <ImageIcon className={styles.placeholder} width={24} height={24} />
                  )}
                  {busy && (
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
          <p className={styles.refusalText}>
            {refusal.kind === 'tooMany' ? t('attach.tooMany', { max: refusal.max }) : t('attach.unsupported')}
          </p>
          <Button variant="ghost" size="small" iconOnly aria-label={t('errors.dismiss')} onClick={onDismissRefusal}>
            <CloseIcon width={14} height={14} />
          </Button>
        </div>
      )}
    </div>
  );
}
