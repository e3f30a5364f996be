/** The layout's sidebar slot: the context, apart from the components (fast refresh). */
import { createContext, useContext } from 'react';

export interface SidebarSlot {
  target: HTMLElement | null;
  setTarget: (element: HTMLElement | null) => void;
  /** How many <LayoutSidebar> are mounted; the layout shows the column only when > 0. */
  users: number;
  addUser: () => () => void;
  /** Closes the navigation drawer (phones); a no-op when it is closed or there is none. */
  closeDrawer: () => void;
  /** For the layout: registers what closeDrawer calls. */
  setDrawerCloser: (close: (() => void) | null) => void;
}

export const SidebarSlotContext = createContext<SidebarSlot | null>(null);

export function useSidebarSlot(): SidebarSlot {
  const slot = useContext(SidebarSlotContext);
  if (!slot) throw new Error('LayoutSidebar must be used inside the main layout');
  return slot;
}

const noop = () => undefined;

/**
 * Closes the layout's navigation drawer, e.g. after a click inside it that does not
 * navigate (the layout closes it on navigation itself). A no-op outside the layout.
 */
export function useCloseDrawer(): () => void {
  return useContext(SidebarSlotContext)?.closeDrawer ?? noop;
}

/**
 * For the layout: `attach` (a ref callback for the element pages render into) and whether
 * a page fills it.
 */
export function useSidebarHost(): { attach: (element: HTMLElement | null) => void; hasContent: boolean } {
  const { setTarget, users } = useSidebarSlot();
  return { attach: setTarget, hasContent: users > 0 };
}
