import { Suspense, useCallback, useEffect, useId, useRef, useState, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, Outlet, useLocation } from 'react-router';
import { Button } from '@/components/button';
import { CloseIcon, MenuIcon } from '@/components/icons';
import { SidebarSlotProvider } from '@/components/layout/sidebar-slot';
import { useSidebarHost, useSidebarSlot } from '@/components/layout/sidebar-slot-context';
import { PageSpinner } from '@/components/spinner';
import { AuthButtons, selectIsAuthenticated, UserMenu, useAuthStore } from '@/features/auth';
import { useChatSocket } from '@/hooks/use-chat-socket';
import { useMediaQuery } from '@/hooks/use-media-query';
import { LanguageSelect } from './language-select';
import styles from './main-layout.module.css';
import { NavLinks } from './nav-links';

/** Matches the breakpoint in main-layout.module.css. */
const NARROW = '(max-width: 768px)';

export function MainLayout() {
  return (
    <SidebarSlotProvider>
      <Shell />
    </SidebarSlotProvider>
  );
}

function Shell() {
  const { t } = useTranslation();
  const isAuthenticated = useAuthStore(selectIsAuthenticated);
  const { attach: attachSidebar, hasContent: sidebarHasContent } = useSidebarHost();
  const isNarrow = useMediaQuery(NARROW);
  const toggleRef = useRef<HTMLButtonElement>(null);
  const panelRef = useRef<HTMLElement>(null);
  const drawer = useDrawer(isNarrow, toggleRef, panelRef);
  // Pages close the drawer through the slot (useCloseDrawer).
  const { setDrawerCloser } = useSidebarSlot();
  const closeDrawer = drawer.close;
  useEffect(() => {
    setDrawerCloser(closeDrawer);
    return () => setDrawerCloser(null);
  }, [setDrawerCloser, closeDrawer]);
  // Guests only have two pages, both reachable from the header: no drawer for them.
  const hasDrawer = isAuthenticated || sidebarHasContent;

  return (
    <div className={styles.shell}>
      <a href="#main" className={styles.skipLink}>
        {t('skipToContent')}
      </a>
      <header className={styles.header}>
        {hasDrawer && (
          <Button
            ref={toggleRef}
            variant="ghost"
            iconOnly
            className={styles.menuButton}
            aria-label={t('nav.openMenu')}
            aria-expanded={drawer.open}
            aria-controls={drawer.id}
            onClick={drawer.toggle}
          >
            <MenuIcon />
          </Button>
        )}
        <Link to="/" className={styles.brand}>
          <img src="/favicon.svg" alt="" width="28" height="28" />
          <span className={styles.brandText}>{t('appName')}</span>
        </Link>
        {isAuthenticated && (
          <nav aria-label={t('nav.main')} className={styles.desktopNav}>
            <NavLinks />
          </nav>
        )}
        <div className={styles.spacer} />
        <div className={styles.actions}>
          <LanguageSelect />
          {isAuthenticated ? <UserMenu /> : <AuthButtons />}
        </div>
      </header>

      <div className={styles.body}>
        <aside
          id={drawer.id}
          ref={panelRef}
          className={styles.sidebar}
          aria-label={t('nav.drawer')}
          data-has-content={sidebarHasContent}
          data-open={drawer.open}
          // Off-canvas and closed: out of the tab order and the accessibility tree.
          inert={isNarrow && !drawer.open}
          onKeyDown={(event) => {
            if (event.key === 'Escape' && drawer.open) drawer.close();
          }}
        >
          <div className={styles.drawerHeader}>
            <span>{t('appName')}</span>
            <Button variant="ghost" iconOnly aria-label={t('nav.closeMenu')} onClick={drawer.close}>
              <CloseIcon />
            </Button>
          </div>
          {isAuthenticated && (
            <nav aria-label={t('nav.main')} className={styles.drawerNav}>
              <NavLinks vertical />
            </nav>
          )}
          <div ref={attachSidebar} className={styles.slot} />
        </aside>
        {isNarrow && drawer.open && <div className={styles.backdrop} aria-hidden="true" onClick={drawer.close} />}

        <main id="main" className={styles.main} tabIndex={-1}>
          {isAuthenticated && <ConnectionBanner />}
          <Suspense fallback={<PageSpinner />}>
            <Outlet />
          </Suspense>
        </main>
      </div>
    </div>
  );
}

/** The drawer's open state, closing on navigation, and focus handling for keyboard users. */
function useDrawer(
  isNarrow: boolean,
  toggleRef: RefObject<HTMLButtonElement | null>,
  panelRef: RefObject<HTMLElement | null>,
) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const { pathname } = useLocation();

  // A navigation from inside the drawer (or a resize to wide) closes it. Adjusting state
  // while rendering, as React recommends over an effect, keyed by what changed.
  const [seen, setSeen] = useState({ pathname, isNarrow });
  if (seen.pathname !== pathname || seen.isNarrow !== isNarrow) {
    setSeen({ pathname, isNarrow });
    if (open) setOpen(false);
  }

  useEffect(() => {
    if (!open) return;
    const panel = panelRef.current;
    panel?.querySelector<HTMLElement>('a[href], button:not([disabled])')?.focus();
    const toggle = toggleRef.current;
    return () => toggle?.focus({ preventScroll: true });
  }, [open, panelRef, toggleRef]);

  const close = useCallback(() => setOpen(false), []);
  return {
    id,
    open,
    toggle: () => setOpen((o) => !o),
    close,
  };
}

function ConnectionBanner() {
  const { t } = useTranslation();
  const { status } = useChatSocket();
  if (status !== 'reconnecting') return null;
  return (
    <p role="status" className={styles.banner}>
      {t('status.reconnecting')}
    </p>
  );
}
