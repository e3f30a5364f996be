import { lazy } from 'react';
import type { RouteObject } from 'react-router';
import { LandingPage, NotFoundPage } from '@/features/legal';
import { AdminOnly, AuthOnly, RequireAuth } from './guards';
import { MainLayout } from './layout/main-layout';
import { RootLayout } from './root-layout';

// Screens behind the guard load on first visit, so a guest never downloads them.
const ChatPage = lazy(() => import('@/features/chat/routes').then((m) => ({ default: m.ChatPage })));
const ProfilePage = lazy(() => import('@/features/profile/routes').then((m) => ({ default: m.ProfilePage })));
const SettingsPage = lazy(() => import('@/features/settings/routes').then((m) => ({ default: m.SettingsPage })));
const PaymentStatusPage = lazy(() =>
  import('@/features/subscription/routes').then((m) => ({ default: m.PaymentStatusPage })),
);
const PaymentSuccessPage = lazy(() =>
  import('@/features/subscription/routes').then((m) => ({ default: m.PaymentSuccessPage })),
);
const PaymentCancelPage = lazy(() =>
  import('@/features/subscription/routes').then((m) => ({ default: m.PaymentCancelPage })),
);
const SharedPage = lazy(() => import('@/features/chat/routes').then((m) => ({ default: m.SharedPage })));
const AdminDashboardPage = lazy(() => import('@/features/admin/routes').then((m) => ({ default: m.DashboardPage })));
const AdminUsersPage = lazy(() => import('@/features/admin/routes').then((m) => ({ default: m.UsersPage })));
const AdminUserPage = lazy(() => import('@/features/admin/routes').then((m) => ({ default: m.UserPage })));
const AdminAuditPage = lazy(() => import('@/features/admin/routes').then((m) => ({ default: m.AuditPage })));
const PrivacyPolicyPage = lazy(() =>
  import('@/features/legal/routes').then((m) => ({ default: m.PrivacyPolicyPage })),
);

/** SPEC §2. Exported apart from the browser router so tests can mount it in memory. */
export const routes: RouteObject[] = [
  {
    element: <RootLayout />,
    children: [
      {
        element: <MainLayout />,
        children: [
          { index: true, element: <LandingPage /> },
          { path: 'privacy-policy', element: <PrivacyPolicyPage /> },
          // A share link opens for anyone who has it, signed in or not (issue 31).
          { path: 'share/:token', element: <SharedPage /> },
          {
            element: <RequireAuth />,
            children: [
              { path: 'chat', element: <ChatPage /> },
              { path: 'chat/:id', element: <ChatPage /> },
              { path: 'profile', element: <ProfilePage /> },
              { path: 'settings', element: <SettingsPage /> },
              { path: 'payment/status', element: <PaymentStatusPage /> },
              { path: 'payment-success', element: <PaymentSuccessPage /> },
              { path: 'payment-cancel', element: <PaymentCancelPage /> },
            ],
          },
        ],
      },
      {
        // The operator console, admins only; anyone else signed in gets the not-found page
        // (an unknown /admin/… path too, through `*` below), guests go to `/`.
        path: 'admin',
        element: (
          <AuthOnly>
            <AdminOnly fallback={<NotFoundPage />}>
              <MainLayout />
            </AdminOnly>
          </AuthOnly>
        ),
        children: [
          { index: true, element: <AdminDashboardPage /> },
          { path: 'users', element: <AdminUsersPage /> },
          { path: 'users/:id', element: <AdminUserPage /> },
          { path: 'audit', element: <AdminAuditPage /> },
        ],
      },
      {
        // Outside the main layout (SPEC §2); guests are sent to `/` like anywhere else.
        path: '*',
        element: (
          <AuthOnly>
            <NotFoundPage />
          </AuthOnly>
        ),
      },
    ],
  },
];
