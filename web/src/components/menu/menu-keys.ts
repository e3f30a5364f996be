import type { KeyboardEvent } from 'react';

/**
 * The keys of a menu button's open menu (WAI-ARIA menu pattern): arrows move between its
 * `menuitem`s (wrapping), Home and End go to the ends, Escape closes it and gives focus
 * back to its button, Tab closes it and lets focus move on. `close(refocus)` closes it.
 */
export function onMenuKeyDown(
  event: KeyboardEvent<HTMLElement>,
  menu: HTMLElement | null,
  close: (refocus: boolean) => void,
): void {
  const items = [...(menu?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
  const index = items.indexOf(document.activeElement as HTMLElement);
  const focus = (i: number) => items[(i + items.length) % items.length]?.focus();
  switch (event.key) {
    case 'ArrowDown':
      focus(index + 1);
      break;
    case 'ArrowUp':
      focus(index - 1);
      break;
    case 'Home':
      focus(0);
      break;
    case 'End':
      focus(items.length - 1);
      break;
    case 'Escape':
      close(true);
      break;
    case 'Tab':
      close(false);
      return;
    default:
      return;
  }
  event.preventDefault();
}
