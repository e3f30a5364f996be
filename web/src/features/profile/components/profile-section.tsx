import { useId, type ReactNode } from 'react';
import styles from './profile-page.module.css';

/** A card with its own heading, announced as a labelled region. */
export function ProfileSection({
  title,
  tone,
  children,
}: {
  title: string;
  tone?: 'danger';
  children: ReactNode;
}) {
  const id = useId();
  return (
    <section aria-labelledby={id} className={[styles.card, tone === 'danger' && styles.danger].filter(Boolean).join(' ')}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}
