/** Pages loaded lazily by the router; kept apart from index.ts so they split into their own chunk. */
export { PrivacyPolicyPage } from './components/privacy-policy-page';
