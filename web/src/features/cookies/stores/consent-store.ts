/**
 * Cookie consent (SPEC §1, §3: necessary, functional, analytics). The choice is kept in
 * localStorage with the version of the consent text it answered and when it was made:
 *
 *   cookie-consent = {"version":1,"updatedAt":"2026-11-22T07:45:05.000Z",
 *                     "choices":{"necessary":true,"functional":false,"analytics":true}}
 *
 * A choice made for another version (the categories or their purposes changed) or older
 * than CONSENT_MAX_AGE_MS counts as no choice, so the dialog asks again. Necessary storage
 * is always on; the optional categories default to off (GDPR: consent is opt-in).
 */
import { create } from 'zustand';

export const COOKIE_CATEGORIES = ['necessary', 'functional', 'analytics'] as const;
export type CookieCategory = (typeof COOKIE_CATEGORIES)[number];
export const OPTIONAL_COOKIE_CATEGORIES = ['functional', 'analytics'] as const;
export type OptionalCookieCategory = (typeof OPTIONAL_COOKIE_CATEGORIES)[number];

export interface CookieChoices {
  /** Sign-in, tab sync and remembering interface choices: cannot be switched off. */
  necessary: true;
  functional: boolean;
  analytics: boolean;
}

export type OptionalCookieChoices = Pick<CookieChoices, OptionalCookieCategory>;

export interface StoredConsent {
  version: number;
  /** ISO 8601, when the choice was made. */
  updatedAt: string;
  choices: CookieChoices;
}

export const CONSENT_STORAGE_KEY = 'cookie-consent';
/** Raise it when a category is added or its purpose changes: everyone is asked again. */
export const CONSENT_VERSION = 1;
/** A choice is asked again after a year (consent should not be assumed forever). */
export const CONSENT_MAX_AGE_MS = 365 * 24 * 60 * 60 * 1000;

export const DEFAULT_COOKIE_CHOICES: Readonly<CookieChoices> = Object.freeze({
  necessary: true,
  functional: false,
  analytics: false,
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The stored consent if it is well-formed, of the current version and not expired; else null. */
export function parseConsent(raw: string | null, now: number = Date.now()): StoredConsent | null {
  if (!raw) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isRecord(value) || value.version !== CONSENT_VERSION) return null;
  const { updatedAt, choices } = value;
  if (typeof updatedAt !== 'string' || !isRecord(choices)) return null;
  const time = Date.parse(updatedAt);
  if (Number.isNaN(time) || now - time > CONSENT_MAX_AGE_MS) return null;
  if (typeof choices.functional !== 'boolean' || typeof choices.analytics !== 'boolean') return null;
  return {
    version: CONSENT_VERSION,
    updatedAt,
    // Whatever was stored, necessary storage is on: it is what makes the app work.
    choices: { necessary: true, functional: choices.functional, analytics: choices.analytics },
  };
}

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    // Blocked by privacy settings: the choice then lasts for this page load.
    return null;
  }
}

export function readStoredConsent(now?: number): StoredConsent | null {
  try {
    return parseConsent(storage()?.getItem(CONSENT_STORAGE_KEY) ?? null, now);
  } catch {
    return null;
  }
}

function writeStoredConsent(consent: StoredConsent): void {
  try {
    storage()?.setItem(CONSENT_STORAGE_KEY, JSON.stringify(consent));
  } catch {
    // Quota or blocked storage: keep the choice in memory for this page load.
  }
}

interface ConsentState {
  /** null until a (current, unexpired) choice exists: the dialog is then shown. */
  consent: StoredConsent | null;
  /** The dialog was reopened on purpose (settings page, privacy policy). */
  settingsOpen: boolean;
  save: (choices: OptionalCookieChoices) => void;
  acceptAll: () => void;
  rejectOptional: () => void;
  openSettings: () => void;
  closeSettings: () => void;
  /** Reads localStorage again, e.g. after another tab changed it. */
  reload: () => void;
}

export const useConsentStore = create<ConsentState>()((set, get) => ({
  consent: readStoredConsent(),
  settingsOpen: false,
  save: ({ functional, analytics }) => {
    const consent: StoredConsent = {
      version: CONSENT_VERSION,
      updatedAt: new Date().toISOString(),
      choices: { necessary: true, functional, analytics },
    };
    writeStoredConsent(consent);
    set({ consent, settingsOpen: false });
  },
  acceptAll: () => get().save({ functional: true, analytics: true }),
  rejectOptional: () => get().save({ functional: false, analytics: false }),
  openSettings: () => set({ settingsOpen: true }),
  closeSettings: () => set({ settingsOpen: false }),
  reload: () => set({ consent: readStoredConsent() }),
}));

/**
 * Follows the choice made in other tabs (the `storage` event fires only in the others).
 * Returns the function that stops listening.
 */
export function syncConsentAcrossTabs(): () => void {
  const onStorage = (event: StorageEvent) => {
    // key null: the other tab cleared the whole storage.
    if (event.key === CONSENT_STORAGE_KEY || event.key === null) useConsentStore.getState().reload();
  };
  window.addEventListener('storage', onStorage);
  return () => window.removeEventListener('storage', onStorage);
}

export interface CookieConsentInfo extends CookieChoices {
  /** Whether the visitor has made a (current) choice; until then only necessary storage is allowed. */
  decided: boolean;
  /** When the choice was made (ISO 8601), or null. */
  updatedAt: string | null;
}

export function consentInfo(consent: StoredConsent | null): CookieConsentInfo {
  return {
    ...(consent?.choices ?? DEFAULT_COOKIE_CHOICES),
    decided: consent !== null,
    updatedAt: consent?.updatedAt ?? null,
  };
}

/** The current choices outside React, e.g. before loading an analytics script. */
export function getCookieConsent(): CookieConsentInfo {
  return consentInfo(useConsentStore.getState().consent);
}

/** Reopens the consent dialog with the current choices (settings page, privacy policy). */
export function openCookieSettings(): void {
  useConsentStore.getState().openSettings();
}
