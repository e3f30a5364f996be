import { useMemo } from 'react';
import { consentInfo, useConsentStore, type CookieConsentInfo } from '../stores/consent-store';

/**
 * The visitor's cookie choices, re-rendering when they change (in this tab or another):
 * `{ necessary: true, functional, analytics, decided, updatedAt }`. Until a choice is made,
 * the optional categories read false.
 */
export function useCookieConsent(): CookieConsentInfo {
  const consent = useConsentStore((state) => state.consent);
  return useMemo(() => consentInfo(consent), [consent]);
}
