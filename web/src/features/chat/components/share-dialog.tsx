import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { Button } from '@/components/button';
import { Checkbox } from '@/components/checkbox';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { useAsyncAction } from '@/hooks/use-async-action';
import type { Conversation, Share } from '@/types/generated';
import { chatApi } from '../api/chat-api';
import { CheckIcon, CopyIcon } from './chat-icons';
import styles from './conversation-dialogs.module.css';

/**
 * "Share": a link to a read-only copy of the branch shown now (later messages are not in
 * it). The owner's name is shown on the page only when asked; the link is revoked in
 * Settings → Shared links.
 */
export function ShareDialog({ conversation, onClose }: { conversation: Conversation | null; onClose: () => void }) {
  const { t } = useTranslation('chat');
  const [showName, setShowName] = useState(false);
  const [share, setShare] = useState<Share | null>(null);
  const [copied, setCopied] = useState(false);
  const action = useAsyncAction();
  const title = conversation?.title ?? t('untitled');

  const create = async () => {
    if (!conversation) return;
    await action.run(async () => {
      const { data } = await chatApi.createShare(conversation._id, showName);
      setShare(data);
    });
  };

  const copy = async () => {
    if (!share) return;
    try {
      await navigator.clipboard.writeText(share.url);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      // No clipboard (plain http, refused): the link is selected to copy by hand.
      document.querySelector<HTMLInputElement>('[data-testid="share-url"]')?.select();
    }
  };

  return (
    <Dialog open={conversation !== null} onClose={onClose} title={t('share.title')}>
      <div className={styles.form} data-testid="share-dialog">
        <p className={styles.body}>{t('share.body', { title })}</p>
        {share ? (
          <>
            <TextField
              label={t('share.link')}
              value={share.url}
              readOnly
              data-testid="share-url"
              onFocus={(event) => event.target.select()}
            />
            <p className={styles.hint}>
              {share.showName ? t('share.withName') : t('share.anonymous')}{' '}
              <Link to="/settings#shared-links" onClick={onClose}>
                {t('share.manage')}
              </Link>
            </p>
          </>
        ) : (
          <Checkbox
            label={t('share.showName')}
            checked={showName}
            data-testid="share-show-name"
            onChange={(event) => setShowName(event.target.checked)}
          />
        )}
        <FormAlert>{action.error}</FormAlert>
        <div className={styles.buttons}>
          <Button variant="secondary" onClick={onClose}>
            {t('share.close')}
          </Button>
          {share ? (
            <Button data-testid="share-copy" onClick={() => void copy()}>
              {copied ? <CheckIcon width={16} height={16} /> : <CopyIcon width={16} height={16} />}
              {copied ? t('share.copied') : t('share.copy')}
            </Button>
          ) : (
            <Button loading={action.pending} data-testid="share-create" onClick={() => void create()}>
              {t('share.create')}
            </Button>
          )}
        </div>
        <p className="visually-hidden" role="status">
          {copied ? t('share.copied') : share ? t('share.created') : ''}
        </p>
      </div>
    </Dialog>
  );
}
