import { Outlet, ScrollRestoration } from 'react-router';
import { Toaster } from '@/components/toast';
import { AuthDialogs } from '@/features/auth';
import { CookieConsent } from '@/features/cookies';

/** Wraps every route, the not-found page included: what must exist on every screen. */
export function RootLayout() {
  return (
    <>
      <Outlet />
      <AuthDialogs />
      <CookieConsent />
      <Toaster />
      <ScrollRestoration />
    </>
  );
}
