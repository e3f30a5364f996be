export { CookieConsent } from './components/cookie-consent';
