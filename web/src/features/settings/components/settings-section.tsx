import { useId, type ReactNode } from 'react';
import styles from './settings-page.module.css';

/** A card with its own heading, announced as a labelled region; `id` makes it linkable. */
export function SettingsSection({ id, title, children }: { id?: string; title: string; children: ReactNode }) {
  const headingId = useId();
  return (
    <section id={id} aria-labelledby={headingId} className={styles.card}>
      <h2 id={headingId}>{title}</h2>
      {children}
    </section>
  );
}
