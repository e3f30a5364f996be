import type { ComponentPropsWithoutRef, KeyboardEvent, ReactNode, Ref } from 'react';
import styles from './menu.module.css';

/** The button and its menu; the menu is placed against it. Takes `useMenu().anchorProps`. */
export function MenuAnchor({ ref, className, children }: { ref: Ref<HTMLDivElement>; className?: string; children: ReactNode }) {
  return (
    <div ref={ref} className={className ? `${styles.anchor} ${className}` : styles.anchor}>
      {children}
    </div>
  );
}

/**
 * Where a menu opens from its button: above or below it, lined up with its start (left)
 * or end (right) edge.
 */
export type MenuPlacement = 'above-start' | 'below-start' | 'below-end';

export interface MenuProps extends Omit<ComponentPropsWithoutRef<'div'>, 'role' | 'id' | 'onKeyDown'> {
  /** From `useMenu().menuProps`. */
  ref: Ref<HTMLDivElement>;
  id: string;
  shown: boolean;
  onKeyDown: (event: KeyboardEvent<HTMLDivElement>) => void;
  /** The menu's accessible name. */
  label: string;
  placement: MenuPlacement;
}

/** The open menu (nothing while it is closed). */
export function Menu({ shown, label, placement, className, children, ...rest }: MenuProps) {
  if (!shown) return null;
  return (
    <div
      role="menu"
      aria-label={label}
      className={className ? `${styles.menu} ${className}` : styles.menu}
      data-placement={placement}
      {...rest}
    >
      {children}
    </div>
  );
}

/** A heading over the items, hidden from assistive technology (the menu's label names it). */
export function MenuTitle({ children }: { children: ReactNode }) {
  return (
    <p className={styles.title} aria-hidden="true">
      {children}
    </p>
  );
}

export interface MenuItemProps extends Omit<ComponentPropsWithoutRef<'button'>, 'type' | 'role' | 'tabIndex' | 'className'> {
  /** Deletes or cannot be undone: in the danger colour. */
  danger?: boolean;
}

/** One item; the arrows move the focus between the items, so none is a Tab stop. */
export function MenuItem({ danger = false, children, ...rest }: MenuItemProps) {
  return (
    <button type="button" role="menuitem" tabIndex={-1} className={styles.item} data-danger={danger || undefined} {...rest}>
      {children}
    </button>
  );
}

/** An item's label that may be long (a model's name): it wraps within the menu. */
export function MenuItemText({ children }: { children: ReactNode }) {
  return <span className={styles.itemText}>{children}</span>;
}
