import { useTranslation } from 'react-i18next';
import styles from './spinner.module.css';

export interface SpinnerProps {
  size?: 'small' | 'medium' | 'large';
  /** Inside a control that already says it is busy: hide it from assistive tech. */
  decorative?: boolean;
  label?: string;
}

export function Spinner({ size = 'medium', decorative = false, label }: SpinnerProps) {
  const { t } = useTranslation();
  const className = [styles.spinner, size !== 'medium' && styles[size]].filter(Boolean).join(' ');
  if (decorative) return <span className={className} aria-hidden="true" />;
  return (
    <span role="status" className={className}>
      <span className="visually-hidden">{label ?? t('status.loading')}</span>
    </span>
  );
}

/** Fills the page area while a route or the session loads. */
export function PageSpinner() {
  return (
    <div className={styles.page}>
      <Spinner size="large" />
    </div>
  );
}
