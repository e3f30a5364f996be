import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { onMenuKeyDown } from './menu-keys';

export interface MenuOptions {
  /**
   * Whether the button has a menu now (true by default). While it has none the menu is not
   * shown, and the button is not marked as a menu button.
   */
  enabled?: boolean;
  /** Called when the menu is closed by a choice or a key (not by a press outside). */
  onClose?: () => void;
}

/**
 * A menu button's state and behaviour: whether its menu is open, and the props its
 * button (`buttonProps`), `MenuAnchor` (`anchorProps`) and `Menu` (`menuProps`) take.
 *
 * Opened, the first item takes the focus; a press anywhere outside the anchor closes it;
 * the keys are those of `onMenuKeyDown`. `close(refocus)` closes it, and gives the focus
 * back to the button when asked.
 */
export function useMenu({ enabled = true, onClose }: MenuOptions = {}) {
  const menuId = useId();
  const [open, setOpen] = useState(false);
  const anchorRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const shown = open && enabled;

  // Opened: the first item takes the focus. A press anywhere else closes it.
  useEffect(() => {
    if (!shown) return;
    menuRef.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
    const onPointerDown = (event: PointerEvent) => {
      if (!anchorRef.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onPointerDown);
    return () => document.removeEventListener('pointerdown', onPointerDown);
  }, [shown]);

  const close = (refocus: boolean) => {
    setOpen(false);
    onClose?.();
    if (refocus) buttonRef.current?.focus();
  };

  return {
    shown,
    close,
    /** Opens a closed menu and closes an open one (the button's click). */
    toggle: () => setOpen(!open),
    /** The button's `onKeyDown` where `key` (the arrow towards the menu) opens it. */
    openOnKey: (key: 'ArrowUp' | 'ArrowDown') => (event: KeyboardEvent<HTMLButtonElement>) => {
      if (enabled && !shown && event.key === key) {
        event.preventDefault();
        setOpen(true);
      }
    },
    /** For measuring where the menu fits. */
    anchorRef,
    menuRef,
    buttonProps: {
      ref: buttonRef,
      'aria-haspopup': enabled ? ('menu' as const) : undefined,
      'aria-expanded': enabled ? shown : undefined,
      'aria-controls': shown ? menuId : undefined,
    },
    anchorProps: { ref: anchorRef },
    menuProps: {
      ref: menuRef,
      id: menuId,
      shown,
      onKeyDown: (event: KeyboardEvent<HTMLDivElement>) => onMenuKeyDown(event, menuRef.current, close),
    },
  };
}
