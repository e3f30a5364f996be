import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { defaultNS, namespaces, resources } from '@/locales/resources';
import type { Language } from '@/types/generated';

export type { Language };

/** The server's languages (the generated `Language`), in the order they are offered. */
export const SUPPORTED_LANGUAGES = ['en-US', 'hu-HU'] as const satisfies readonly Language[];
export const FALLBACK_LANGUAGE: Language = 'en-US';

/** A guest's own pick in the header; a logged-in user's language lives in their settings. */
const GUEST_LANGUAGE_KEY = 'language';

/** Reads a language hint loosely, as the server does: `hu…` is hu-HU, anything else en-US. */
export function normalizeLanguage(value: string | null | undefined): Language {
  return value?.trim().toLowerCase().startsWith('hu') ? 'hu-HU' : 'en-US';
}

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (SUPPORTED_LANGUAGES as readonly string[]).includes(value);
}

/** SPEC §1: the browser's language, else en-US; a guest's explicit choice wins over it. */
export function detectLanguage(): Language {
  try {
    const saved = localStorage.getItem(GUEST_LANGUAGE_KEY);
    if (isLanguage(saved)) return saved;
  } catch {
    // Storage blocked: fall through to the browser language.
  }
  const candidates = navigator.languages.length > 0 ? navigator.languages : [navigator.language];
  // The first language the browser lists that we support; Hungarian anywhere later in
  // the list does not beat an English first choice.
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    if (lower.startsWith('hu')) return 'hu-HU';
    if (lower.startsWith('en')) return 'en-US';
  }
  return FALLBACK_LANGUAGE;
}

export function rememberGuestLanguage(language: Language): void {
  try {
    localStorage.setItem(GUEST_LANGUAGE_KEY, language);
  } catch {
    // Not fatal: the choice lasts for this page load only.
  }
}

export const i18n = i18next.createInstance();

void i18n.use(initReactI18next).init({
  resources,
  lng: FALLBACK_LANGUAGE,
  fallbackLng: FALLBACK_LANGUAGE,
  supportedLngs: SUPPORTED_LANGUAGES,
  ns: namespaces,
  defaultNS,
  // Resources are bundled, so init finishes synchronously and the first render is translated.
  initAsync: false,
  interpolation: { escapeValue: false }, // React escapes already.
  returnNull: false,
});

i18n.on('languageChanged', (language) => {
  // Screen readers pick their voice from it. (No document when tests run in Node.)
  if (typeof document !== 'undefined') document.documentElement.lang = language;
});

export function currentLanguage(): Language {
  return normalizeLanguage(i18n.resolvedLanguage ?? i18n.language);
}

export async function setLanguage(language: Language): Promise<void> {
  if (i18n.language !== language) await i18n.changeLanguage(language);
}
