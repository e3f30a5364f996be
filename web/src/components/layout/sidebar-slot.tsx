/**
 * Lets a page put content into the main layout's sidebar (the conversation list of the
 * chat page): a column on wide screens, inside the navigation drawer on phones. The page
 * renders <LayoutSidebar>…</LayoutSidebar>; the layout owns where it appears.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { SidebarSlotContext, useSidebarSlot, type SidebarSlot } from './sidebar-slot-context';

export function SidebarSlotProvider({ children }: { children: ReactNode }) {
  const [target, setTarget] = useState<HTMLElement | null>(null);
  const [users, setUsers] = useState(0);
  const addUser = useCallback(() => {
    setUsers((n) => n + 1);
    return () => setUsers((n) => n - 1);
  }, []);
  const drawerCloser = useRef<(() => void) | null>(null);
  const closeDrawer = useCallback(() => drawerCloser.current?.(), []);
  const setDrawerCloser = useCallback((close: (() => void) | null) => {
    drawerCloser.current = close;
  }, []);
  const value = useMemo<SidebarSlot>(
    () => ({ target, setTarget, users, addUser, closeDrawer, setDrawerCloser }),
    [target, users, addUser, closeDrawer, setDrawerCloser],
  );
  return <SidebarSlotContext.Provider value={value}>{children}</SidebarSlotContext.Provider>;
}

export function LayoutSidebar({ children }: { children: ReactNode }) {
  const { target, addUser } = useSidebarSlot();
  useEffect(() => addUser(), [addUser]);
  return target ? createPortal(children, target) : null;
}
