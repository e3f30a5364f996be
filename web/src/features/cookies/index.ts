/**
 * Cookie consent (SPEC §1). The dialog is mounted once at the root; other features reopen
 * it with `openCookieSettings()` (or render `<CookieSettingsButton />`) and read the
 * choices with `useCookieConsent()` (or `getCookieConsent()` outside React).
 */
export { CookieConsent } from './components/cookie-consent';
export { CookieSettingsButton } from './components/cookie-settings-button';
export { useCookieConsent } from './hooks/use-cookie-consent';
export {
  COOKIE_CATEGORIES,
  getCookieConsent,
  openCookieSettings,
  type CookieCategory,
  type CookieChoices,
  type CookieConsentInfo,
} from './stores/consent-store';
