import { useTranslation } from 'react-i18next';
import { Button } from '../button';
import { CloseIcon } from '../icons';
import styles from './toaster.module.css';
import { useToastStore, type Toast, type ToastPosition } from './toast-store';

const POSITIONS: ToastPosition[] = ['top', 'bottom'];

/** Renders the toasts; mounted once at the root. */
export function Toaster() {
  const { t } = useTranslation();
  const toasts = useToastStore((state) => state.toasts);
  return (
    <section aria-label={t('notifications')}>
      {POSITIONS.map((position) => (
        <div key={position} className={`${styles.region} ${styles[position]}`}>
          {toasts
            .filter((toast) => toast.position === position)
            .map((toast) => (
              <ToastItem key={toast.id} toast={toast} />
            ))}
        </div>
      ))}
    </section>
  );
}

function ToastItem({ toast }: { toast: Toast }) {
  const { t } = useTranslation();
  const dismiss = useToastStore((state) => state.dismiss);
  return (
    // Errors interrupt (alert); everything else waits its turn (status).
    <div role={toast.type === 'negative' ? 'alert' : 'status'} className={`${styles.toast} ${styles[toast.type]}`}>
      <span className={styles.message}>{toast.message}</span>
      <Button
        variant="ghost"
        size="small"
        iconOnly
        className={styles.dismiss}
        aria-label={t('actions.dismiss')}
        onClick={() => dismiss(toast.id)}
      >
        <CloseIcon />
      </Button>
    </div>
  );
}
