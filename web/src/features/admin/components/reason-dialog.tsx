import { useId, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { useAsyncAction } from '@/hooks/use-async-action';
import styles from './admin.module.css';

export interface ReasonDialogProps {
  title: string;
  /** What the action does; fields of its own (a plan, an amount) go here too. */
  children?: ReactNode;
  confirmLabel: string;
  /** Dangerous actions (suspend, refund) get the danger look. */
  danger?: boolean;
  /** False while the action's own fields are not valid yet. */
  canSubmit?: boolean;
  /** Runs the action with the trimmed reason; a failure stays in the dialog, nothing changes. */
  onConfirm: (reason: string) => Promise<void>;
  onClose: () => void;
  testId: string;
}

/**
 * Every admin action asks for its reason, which the audit log keeps: the submit stays
 * disabled until there is one. The server's error, in the admin's language, shows here.
 */
export function ReasonDialog({
  title,
  children,
  confirmLabel,
  danger = false,
  canSubmit = true,
  onConfirm,
  onClose,
  testId,
}: ReasonDialogProps) {
  const { t } = useTranslation(['admin', 'common']);
  const [reason, setReason] = useState('');
  const action = useAsyncAction();
  const reasonId = useId();
  const hintId = useId();
  const trimmed = reason.trim();

  const submit = async () => {
    if (!trimmed || !canSubmit) return;
    if (await action.run(() => onConfirm(trimmed))) onClose();
  };

  return (
    <Dialog open onClose={action.pending ? () => undefined : onClose} title={title}>
      <form
        className={styles.dialogForm}
        data-testid={testId}
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <FormAlert>{action.error}</FormAlert>
        {children}
        <div className={styles.field}>
          <label htmlFor={reasonId} className={styles.label}>
            {t('dialog.reason')}
          </label>
          <textarea
            id={reasonId}
            className={styles.textarea}
            value={reason}
            required
            rows={3}
            maxLength={500}
            aria-describedby={hintId}
            onChange={(event) => setReason(event.target.value)}
            data-testid="admin-reason"
          />
          <span id={hintId} className={styles.hint}>
            {t('dialog.reasonHint')}
          </span>
        </div>
        <div className={styles.dialogActions}>
          <Button variant="secondary" onClick={onClose} disabled={action.pending}>
            {t('common:actions.cancel')}
          </Button>
          <Button
            type="submit"
            variant={danger ? 'danger' : 'primary'}
            disabled={!trimmed || !canSubmit}
            loading={action.pending}
            data-testid="admin-dialog-submit"
          >
            {confirmLabel}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
