import { useRef, useState, type ChangeEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { refreshConversations } from '@/features/chat';
import { useAsyncAction } from '@/hooks/use-async-action';
import type { ImportResult } from '@/types/generated';
import { settingsApi } from '../api/settings-api';
import styles from './settings-page.module.css';

/** What the import takes (docs/api.md): our export (its JSON or the zip) or ChatGPT's conversations.json. */
const IMPORT_ACCEPT = '.json,.zip,application/json,application/zip';

function formatBytes(bytes: number, language: string): string {
  const units = ['B', 'kB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${new Intl.NumberFormat(language, { maximumFractionDigits: unit === 0 ? 0 : 1 }).format(value)} ${units[unit]}`;
}

/** Saves a blob under `name` through a temporary link (the download needs the session). */
function saveBlob(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Settings → Account → "Your data": export everything as a zip (downloaded with the
 * bytes counted as they stream, then saved) and import conversations from a file.
 */
export function DataSection() {
  const { t, i18n } = useTranslation('settings');
  const exportAction = useAsyncAction();
  const importAction = useAsyncAction();
  const [received, setReceived] = useState<{ bytes: number; total: number | null } | null>(null);
  const [exported, setExported] = useState(false);
  const [imported, setImported] = useState<ImportResult | null>(null);
  const fileRef = useRef<HTMLInputElement>(null);

  const runExport = async () => {
    setExported(false);
    setReceived({ bytes: 0, total: null });
    const ok = await exportAction.run(async () => {
      const blob = await settingsApi.exportAccount((bytes, total) => setReceived({ bytes, total }));
      saveBlob(blob, `chat-export-${new Date().toISOString().slice(0, 10)}.zip`);
    });
    setReceived(null);
    setExported(ok);
  };

  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    // The same file may be picked again after a fix.
    event.target.value = '';
    if (!file) return;
    setImported(null);
    await importAction.run(async () => {
      const { data } = await settingsApi.importConversations(file);
      setImported(data);
      refreshConversations();
    });
  };

  const progress =
    received === null
      ? null
      : received.total
        ? t('data.progressOf', { received: formatBytes(received.bytes, i18n.language), total: formatBytes(received.total, i18n.language) })
        : t('data.progress', { received: formatBytes(received.bytes, i18n.language) });

  return (
    <div className={styles.form} data-testid="data-section">
      <h3 className={styles.subheading}>{t('data.title')}</h3>
      <div className={styles.form}>
        <p className={styles.hint}>{t('data.exportHint')}</p>
        <div className={styles.actions}>
          <Button variant="secondary" loading={exportAction.pending} data-testid="export-data" onClick={() => void runExport()}>
            {t('data.export')}
          </Button>
          {received && received.total !== null && (
            <progress className={styles.progress} max={received.total} value={received.bytes} aria-label={t('data.export')} />
          )}
        </div>
        <p className={styles.hint} role="status" data-testid="export-status">
          {progress ?? (exported ? t('data.exported') : '')}
        </p>
        <FormAlert>{exportAction.error}</FormAlert>
      </div>
      <div className={styles.form}>
        <p className={styles.hint}>{t('data.importHint')}</p>
        <div className={styles.actions}>
          <Button
            variant="secondary"
            loading={importAction.pending}
            data-testid="import-button"
            onClick={() => fileRef.current?.click()}
          >
            {t('data.import')}
          </Button>
          <input
            ref={fileRef}
            type="file"
            accept={IMPORT_ACCEPT}
            className="visually-hidden"
            tabIndex={-1}
            aria-label={t('data.import')}
            data-testid="import-file"
            onChange={(event) => void onFile(event)}
          />
        </div>
        <p className={styles.hint} role="status" data-testid="import-status">
          {importAction.pending
            ? t('data.importing')
            : imported
              ? t('data.imported', { conversations: imported.conversations, messages: imported.messages, count: imported.conversations })
              : ''}
        </p>
        <FormAlert>{importAction.error}</FormAlert>
      </div>
    </div>
  );
}
