/** Pages loaded lazily by the router; kept apart from index.ts so they split into their own chunk. */
export { ProfilePage } from './components/profile-page';
