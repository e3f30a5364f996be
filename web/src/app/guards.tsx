import type { ReactNode } from 'react';
import { Navigate, Outlet } from 'react-router';
import { PageSpinner } from '@/components/spinner';
import { selectAuthStatus, selectUser, useAuthStore } from '@/features/auth';

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

/**
 * The operator console (issue 34): inside AuthOnly, so guests are already sent away. A
 * signed-in user who is not an admin gets `fallback` (the not-found page), as for any
 * unknown path: the console does not tell them it exists. The server checks the role on
 * every call anyway; this only keeps the screens (and their code) from non-admins.
 */
export function AdminOnly({ children, fallback }: { children: ReactNode; fallback: ReactNode }) {
  const user = useAuthStore(selectUser);
  return user?.role === 'admin' ? children : fallback;
}
