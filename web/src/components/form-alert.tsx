import type { ReactNode } from 'react';
import styles from './field.module.css';

/** A message about the whole form; `role="alert"` so screen readers announce it at once. */
export function FormAlert({ children, tone = 'error' }: { children: ReactNode; tone?: 'error' | 'info' }) {
  if (!children) return null;
  return (
    <div
      role={tone === 'error' ? 'alert' : 'status'}
      className={[styles.alert, tone === 'info' && styles.alertInfo].filter(Boolean).join(' ')}
    >
      {children}
    </div>
  );
}
