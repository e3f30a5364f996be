/** Pages loaded lazily by the router (admins only); kept apart so they split into their own chunk. */
export { AuditPage } from './components/audit-page';
export { DashboardPage } from './components/dashboard-page';
export { UserPage } from './components/user-page';
export { UsersPage } from './components/users-page';
