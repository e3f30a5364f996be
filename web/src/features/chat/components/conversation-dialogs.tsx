import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { useAsyncAction } from '@/hooks/use-async-action';
import { MAX_TITLE_CHARS, type Conversation } from '@/types/generated';
import { useChatStore } from '../stores/chat';
import styles from './conversation-dialogs.module.css';

export function RenameConversationDialog({
  conversation,
  onClose,
}: {
  conversation: Conversation | null;
  onClose: () => void;
}) {
  const { t } = useTranslation('chat');
  const [title, setTitle] = useState(conversation?.title ?? '');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const action = useAsyncAction();
  const formRef = useRef<HTMLFormElement>(null);
  const open = conversation !== null;
  const input = () => formRef.current?.querySelector('input') ?? null;

  // After the dialog opened (its effect runs first), the title is ready to retype.
  useEffect(() => {
    if (open) formRef.current?.querySelector('input')?.select();
  }, [open]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!conversation) return;
    const trimmed = title.trim();
    if (!trimmed) {
      setFieldError(t('rename.required'));
      input()?.focus();
      return;
    }
    setFieldError(null);
    const ok = await action.run(() => useChatStore.getState().rename(conversation._id, trimmed));
    if (ok) onClose();
  };

  return (
    <Dialog open={open} onClose={onClose} title={t('rename.title')}>
      <form ref={formRef} className={styles.form} onSubmit={(event) => void submit(event)} noValidate>
        <TextField
          label={t('rename.label')}
          value={title}
          maxLength={MAX_TITLE_CHARS}
          error={fieldError}
          data-testid="rename-input"
          onChange={(event) => setTitle(event.target.value)}
        />
        <FormAlert>{action.error}</FormAlert>
        <div className={styles.buttons}>
          <Button variant="secondary" onClick={onClose}>
            {t('actions.cancel')}
          </Button>
          <Button type="submit" loading={action.pending} data-testid="rename-save">
            {t('rename.save')}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

export function DeleteConversationDialog({
  conversation,
  onClose,
}: {
  conversation: Conversation | null;
  onClose: (deleted: boolean) => void;
}) {
  const { t } = useTranslation('chat');
  const action = useAsyncAction();
  const title = conversation?.title ?? t('untitled');

  const confirm = async () => {
    if (!conversation) return;
    const ok = await action.run(() => useChatStore.getState().remove(conversation._id));
    if (ok) onClose(true);
  };

  return (
    <Dialog open={conversation !== null} onClose={() => onClose(false)} title={t('delete.title')}>
      <p className={styles.body}>{t('delete.body', { title })}</p>
      <FormAlert>{action.error}</FormAlert>
      <div className={styles.buttons}>
        <Button variant="secondary" onClick={() => onClose(false)}>
          {t('actions.cancel')}
        </Button>
        <Button variant="danger" loading={action.pending} data-testid="delete-confirm" onClick={() => void confirm()}>
          {t('delete.confirm')}
        </Button>
      </div>
    </Dialog>
  );
}
