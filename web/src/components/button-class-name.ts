import styles from './button.module.css';

export type ButtonVariant = 'primary' | 'secondary' | 'ghost' | 'danger' | 'link';

export interface ButtonLook {
  variant?: ButtonVariant;
  size?: 'medium' | 'small';
  /** Square, holding only an icon; give it an aria-label. */
  iconOnly?: boolean;
  block?: boolean;
}

/** The button look, also for a router <Link> that should appear as a button. */
export function buttonClassName({
  variant = 'primary',
  size = 'medium',
  iconOnly = false,
  block = false,
}: ButtonLook = {}): string {
  return [
    styles.button,
    styles[variant],
    size === 'small' && styles.small,
    iconOnly && styles.icon,
    block && styles.block,
  ]
    .filter(Boolean)
    .join(' ');
}

