import { useTranslation } from 'react-i18next';
import type { Attachment } from '@/types/generated';
import { formatFileSize } from '../lib/files';
import { DocumentIcon } from './chat-icons';
import strip from './attachment-strip.module.css';
import styles from './message-documents.module.css';

/**
 * A message's documents as chips: name, pages (PDF) and size. Each opens the original in
 * a new tab (`GET /api/files/{id}` serves it with its type; the cookie authenticates).
 */
export function MessageDocuments({ files }: { files: readonly Attachment[] }) {
  const { t, i18n } = useTranslation('chat');
  return (
    <ul className={strip.strip} aria-label={t('message.documents')}>
      {files.map((file) => (
        <li key={file._id} className={strip.item}>
          <a
            href={file.url}
            target="_blank"
            rel="noopener noreferrer"
            className={styles.chip}
            title={t('message.openDocument', { name: file.name })}
            data-testid="message-document"
            data-file-id={file._id}
          >
            <DocumentIcon className={styles.icon} width={20} height={20} />
            <span className={styles.text}>
              <span className={styles.name}>{file.name}</span>
              <span className={styles.meta}>
                {[file.pages ? t('attach.pages', { count: file.pages }) : null, formatFileSize(file.size, i18n.language)]
                  .filter(Boolean)
                  .join(' · ')}
              </span>
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}
