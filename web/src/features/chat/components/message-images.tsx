import { useState, type MouseEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Dialog } from '@/components/dialog';
import type { Attachment } from '@/types/generated';
import { fitWithin } from '../lib/image-prep';
import { DownloadIcon } from './chat-icons';
import strip from './attachment-strip.module.css';
import styles from './message-images.module.css';

/** The server's thumbnails fit this square (docs/api.md `GET /api/files/{id}/thumbnail`). */
export const THUMBNAIL_EDGE = 256;

export interface BubbleImage {
  file: Attachment;
  /** The local preview of this tab's own send, until the server's message replaces it. */
  previewUrl?: string | null;
}

/**
 * A message's images as thumbnails. Their size is known before they load (width and
 * height from the file), so the conversation does not jump as they arrive. A click opens
 * the image in a lightbox; a middle or modified click opens it in a new tab, as links do.
 * An answer's images (image generation) stand on the left, each with a "Download" link.
 */
export function MessageImages({ images, answer = false }: { images: readonly BubbleImage[]; answer?: boolean }) {
  const { t } = useTranslation('chat');
  const [shown, setShown] = useState<Attachment | null>(null);

  const onClick = (event: MouseEvent<HTMLAnchorElement>, file: Attachment) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    setShown(file);
  };

  return (
    <>
      <ul
        className={answer ? `${strip.strip} ${styles.images} ${styles.answerImages}` : `${strip.strip} ${styles.images}`}
        data-align={answer ? 'start' : undefined}
        data-count={images.length}
        aria-label={t(answer ? 'message.answerImages' : 'message.images')}
      >
        {images.map(({ file, previewUrl }) => {
          const size = fitWithin(file.width ?? THUMBNAIL_EDGE, file.height ?? THUMBNAIL_EDGE, THUMBNAIL_EDGE);
          return (
            <li key={file._id} className={strip.item}>
              <a
                href={file.url}
                target="_blank"
                rel="noopener noreferrer"
                className={styles.link}
                aria-label={t('message.openImage', { name: file.name })}
                data-testid="message-attachment"
                data-file-id={file._id}
                onClick={(event) => onClick(event, file)}
              >
                <img
                  className={styles.thumb}
                  src={previewUrl ?? file.thumbnailUrl ?? file.url}
                  alt={file.name}
                  width={size.width}
                  height={size.height}
                  // A small image is shown at its own size, not blown up to the row's height.
                  style={{ maxHeight: size.height }}
                  loading="lazy"
                  decoding="async"
                />
              </a>
              {answer && (
                <a
                  className={styles.download}
                  href={file.url}
                  download={file.name}
                  aria-label={t('message.downloadName', { name: file.name })}
                  data-testid="message-image-download"
                >
                  <DownloadIcon width={16} height={16} />
                  {t('message.download')}
                </a>
              )}
            </li>
          );
        })}
      </ul>
      {shown && (
        <Dialog open onClose={() => setShown(null)} title={shown.name} className={styles.lightbox}>
          <img
            className={styles.full}
            src={shown.url}
            alt={shown.name}
            width={shown.width ?? undefined}
            height={shown.height ?? undefined}
            style={{ maxWidth: shown.width ?? undefined }}
            data-testid="lightbox-image"
          />
          <a className={styles.original} href={shown.url} target="_blank" rel="noopener noreferrer">
            {t('message.openOriginal')}
          </a>
        </Dialog>
      )}
    </>
  );
}
