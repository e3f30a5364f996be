/**
 * Placeholder: the cookie consent dialog (necessary, functional, analytics; SPEC §1, §3)
 * is built next. It is already mounted once at the root (src/app/root-layout.tsx), so
 * the feature only has to fill this component in.
 */
export function CookieConsent() {
  return null;
}
