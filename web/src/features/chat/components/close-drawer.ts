/**
 * Closes the layout's navigation drawer (phones) from inside it. The layout closes the
 * drawer on navigation and on Escape; a click that does not change the path (the open
 * conversation, "new chat" on /chat) gets the Escape the layout listens for.
 */
export function closeDrawerFrom(element: HTMLElement | null): void {
  element?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
}
