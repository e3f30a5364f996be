import type { ReactNode } from 'react';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { useAsyncAction } from '@/hooks/use-async-action';
import styles from './forms.module.css';

export interface ConfirmDialogProps {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  cancelLabel: string;
  /** Closes the dialog when it resolves; a failure stays in the dialog. */
  onConfirm: () => Promise<void>;
  onClose: () => void;
}

/** SPEC §4: a downgrade or a cancel happens only after the user confirms it here. */
export function ConfirmDialog({ title, children, confirmLabel, cancelLabel, onConfirm, onClose }: ConfirmDialogProps) {
  const action = useAsyncAction();
  const confirm = async () => {
    if (await action.run(onConfirm)) onClose();
  };
  return (
    <Dialog open onClose={onClose} title={title}>
      <div className={styles.form}>
        <FormAlert>{action.error}</FormAlert>
        {children}
        <div className={styles.actions}>
          <Button variant="secondary" onClick={onClose} disabled={action.pending}>
            {cancelLabel}
          </Button>
          <Button variant="danger" onClick={confirm} loading={action.pending} data-testid="confirm-dialog-confirm">
            {confirmLabel}
          </Button>
        </div>
      </div>
    </Dialog>
  );
}
