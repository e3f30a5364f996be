import { useEffect, useId, useRef, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from './button';
import styles from './dialog.module.css';
import { CloseIcon } from './icons';

export interface DialogProps {
  open: boolean;
  onClose: () => void;
  title: string;
  children: ReactNode;
  className?: string;
  /**
   * False keeps the dialog shown but lets the page behind it work: Stripe.js puts its
   * 3-D Secure window on the page, which a modal dialog would cover and make inert.
   */
  modal?: boolean;
}

/**
 * A modal on the native <dialog>: the browser gives focus trapping, Escape, the top layer
 * and inertness of the page behind it. React state stays the source of truth: Escape and
 * backdrop clicks ask `onClose` instead of closing by themselves.
 */
export function Dialog({ open, onClose, title, children, className, modal = true }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // Where a click started: a drag that selects text and ends on the backdrop is no close.
  const pointerDownOnBackdrop = useRef(false);

  // How the dialog is shown now: switching between modal and not means closing it first.
  const shownModal = useRef<boolean | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && dialog.open && shownModal.current !== modal) dialog.close();
    if (open && !dialog.open) {
      if (modal) dialog.showModal();
      else dialog.show();
      shownModal.current = modal;
    }
    if (!open && dialog.open) dialog.close();
  }, [open, modal]);

  // Closing on unmount too, so a dialog swapped for another does not leave the page inert.
  useEffect(() => {
    const dialog = ref.current;
    return () => {
      if (dialog?.open) dialog.close();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className={[styles.dialog, className].filter(Boolean).join(' ')}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onPointerDown={(event) => {
        pointerDownOnBackdrop.current = event.target === event.currentTarget;
      }}
      onClick={(event) => {
        if (event.target === event.currentTarget && pointerDownOnBackdrop.current) onClose();
      }}
    >
      <DialogPanel titleId={titleId} title={title} onClose={onClose}>
        {children}
      </DialogPanel>
    </dialog>
  );
}

function DialogPanel({
  titleId,
  title,
  onClose,
  children,
}: {
  titleId: string;
  title: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <div className={styles.panel}>
      <div className={styles.header}>
        <h2 id={titleId} className={styles.title}>
          {title}
        </h2>
        <Button variant="ghost" iconOnly aria-label={t('actions.close')} onClick={onClose}>
          <CloseIcon />
        </Button>
      </div>
      {children}
    </div>
  );
}
