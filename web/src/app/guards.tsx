import type { ReactNode } from 'react';
import { Navigate, Outlet } from 'react-router';
import { PageSpinner } from '@/components/spinner';
import { selectAuthStatus, useAuthStore } from '@/features/auth';

/**
 * SPEC §2: a guest may open only `/`, `/privacy-policy` and a share link's
 * `/share/:token` (routes.tsx keeps them outside this gate); anything else redirects to
 * `/`. While a stored token's profile loads, the page waits instead of redirecting, so a
 * reload of /chat stays on /chat.
 */
function AuthGate({ children }: { children: ReactNode }) {
  const status = useAuthStore(selectAuthStatus);
  if (status === 'anonymous') return <Navigate to="/" replace />;
  if (status === 'loading') return <PageSpinner />;
  return children;
}

/** Wraps the routes that need a session. */
export function RequireAuth() {
  return (
    <AuthGate>
      <Outlet />
    </AuthGate>
  );
}

/** For a single element outside the main layout (the not-found page). */
export function AuthOnly({ children }: { children: ReactNode }) {
  return <AuthGate>{children}</AuthGate>;
}
