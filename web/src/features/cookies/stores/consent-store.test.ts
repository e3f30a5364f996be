import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CONSENT_MAX_AGE_MS,
  CONSENT_STORAGE_KEY,
  CONSENT_VERSION,
  DEFAULT_COOKIE_CHOICES,
  getCookieConsent,
  openCookieSettings,
  parseConsent,
  syncConsentAcrossTabs,
  useConsentStore,
  type StoredConsent,
} from './consent-store';

const NOW = Date.parse('2026-11-22T08:00:00.000Z');

function stored(): unknown {
  const raw = localStorage.getItem(CONSENT_STORAGE_KEY);
  return raw === null ? null : JSON.parse(raw);
}

function store(value: unknown): void {
  localStorage.setItem(CONSENT_STORAGE_KEY, JSON.stringify(value));
}

const valid = (overrides: Partial<StoredConsent> = {}): StoredConsent => ({
  version: CONSENT_VERSION,
  updatedAt: '2026-11-01T10:00:00.000Z',
  choices: { necessary: true, functional: true, analytics: false },
  ...overrides,
});

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
  localStorage.clear();
  useConsentStore.setState({ consent: null, settingsOpen: false });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('defaults', () => {
  it('has no choice on a first visit: only necessary storage, optional categories off', () => {
    useConsentStore.getState().reload();
    expect(useConsentStore.getState().consent).toBeNull();
    expect(getCookieConsent()).toEqual({
      necessary: true,
      functional: false,
      analytics: false,
      decided: false,
      updatedAt: null,
    });
    expect(DEFAULT_COOKIE_CHOICES).toEqual({ necessary: true, functional: false, analytics: false });
  });

  it('keeps the settings dialog closed until asked', () => {
    expect(useConsentStore.getState().settingsOpen).toBe(false);
    openCookieSettings();
    expect(useConsentStore.getState().settingsOpen).toBe(true);
    useConsentStore.getState().closeSettings();
    expect(useConsentStore.getState().settingsOpen).toBe(false);
  });
});

describe('persistence', () => {
  it('stores "accept all" with the version and the time of the choice', () => {
    useConsentStore.getState().acceptAll();
    const expected = {
      version: CONSENT_VERSION,
      updatedAt: '2026-11-22T08:00:00.000Z',
      choices: { necessary: true, functional: true, analytics: true },
    };
    expect(stored()).toEqual(expected);
    expect(useConsentStore.getState().consent).toEqual(expected);
    expect(getCookieConsent()).toMatchObject({ functional: true, analytics: true, decided: true });
  });

  it('stores "reject optional" as a choice too, so the dialog is not shown again', () => {
    useConsentStore.getState().rejectOptional();
    expect(stored()).toMatchObject({ choices: { necessary: true, functional: false, analytics: false } });
    expect(getCookieConsent()).toMatchObject({ decided: true, functional: false, analytics: false });
  });

  it('stores each category as chosen, and closes the reopened settings', () => {
    openCookieSettings();
    useConsentStore.getState().save({ functional: false, analytics: true });
    expect(stored()).toMatchObject({ choices: { necessary: true, functional: false, analytics: true } });
    expect(useConsentStore.getState().settingsOpen).toBe(false);
  });

  it('reads a stored choice back (a new page load)', () => {
    store(valid());
    useConsentStore.getState().reload();
    expect(getCookieConsent()).toEqual({
      necessary: true,
      functional: true,
      analytics: false,
      decided: true,
      updatedAt: '2026-11-01T10:00:00.000Z',
    });
  });

  it('replaces an earlier choice and its time', () => {
    store(valid());
    useConsentStore.getState().reload();
    vi.setSystemTime(NOW + 60_000);
    useConsentStore.getState().rejectOptional();
    expect(stored()).toMatchObject({ updatedAt: '2026-11-22T08:01:00.000Z', choices: { functional: false } });
  });

  it('follows a choice made in another tab, and a storage cleared there', () => {
    const stop = syncConsentAcrossTabs();
    store(valid({ choices: { necessary: true, functional: false, analytics: true } }));
    window.dispatchEvent(new StorageEvent('storage', { key: CONSENT_STORAGE_KEY }));
    expect(getCookieConsent()).toMatchObject({ decided: true, analytics: true });

    localStorage.clear();
    window.dispatchEvent(new StorageEvent('storage', { key: null }));
    expect(getCookieConsent().decided).toBe(false);

    // Other keys are none of its business.
    store(valid());
    window.dispatchEvent(new StorageEvent('storage', { key: 'language' }));
    expect(getCookieConsent().decided).toBe(false);
    stop();
    window.dispatchEvent(new StorageEvent('storage', { key: CONSENT_STORAGE_KEY }));
    expect(getCookieConsent().decided).toBe(false);
  });

  it('still works for this page load when storage is blocked', () => {
    const setItem = vi.spyOn(Storage.prototype, 'setItem').mockImplementation(() => {
      throw new DOMException('blocked', 'SecurityError');
    });
    const getItem = vi.spyOn(Storage.prototype, 'getItem').mockImplementation(() => {
      throw new DOMException('blocked', 'SecurityError');
    });
    useConsentStore.getState().reload();
    expect(useConsentStore.getState().consent).toBeNull();
    useConsentStore.getState().acceptAll();
    expect(getCookieConsent()).toMatchObject({ decided: true, functional: true, analytics: true });
    setItem.mockRestore();
    getItem.mockRestore();
  });
});

describe('versioning and validation', () => {
  it('asks again when the choice was made for another version of the consent text', () => {
    store(valid({ version: CONSENT_VERSION - 1 }));
    useConsentStore.getState().reload();
    expect(useConsentStore.getState().consent).toBeNull();
    store(valid({ version: CONSENT_VERSION + 1 }));
    useConsentStore.getState().reload();
    expect(useConsentStore.getState().consent).toBeNull();
  });

  it('asks again when there is no version at all (an older format)', () => {
    store({ necessary: true, functional: true, analytics: true });
    useConsentStore.getState().reload();
    expect(useConsentStore.getState().consent).toBeNull();
  });

  it('asks again once the choice is older than a year', () => {
    const at = (ms: number) => new Date(ms).toISOString();
    expect(parseConsent(JSON.stringify(valid({ updatedAt: at(NOW - CONSENT_MAX_AGE_MS) })), NOW)).not.toBeNull();
    expect(parseConsent(JSON.stringify(valid({ updatedAt: at(NOW - CONSENT_MAX_AGE_MS - 1) })), NOW)).toBeNull();
  });

  it.each([
    ['not JSON', '{oops'],
    ['not an object', '"yes"'],
    ['an array', '[1]'],
    ['no time', JSON.stringify({ version: CONSENT_VERSION, choices: { functional: true, analytics: true } })],
    ['a bad time', JSON.stringify(valid({ updatedAt: 'yesterday' }))],
    ['no choices', JSON.stringify({ version: CONSENT_VERSION, updatedAt: '2026-11-01T10:00:00.000Z' })],
    [
      'a non-boolean choice',
      JSON.stringify({ ...valid(), choices: { necessary: true, functional: 'yes', analytics: false } }),
    ],
  ])('ignores a stored value with %s', (_, raw) => {
    expect(parseConsent(raw, NOW)).toBeNull();
  });

  it('keeps necessary storage on whatever was stored', () => {
    const raw = JSON.stringify({ ...valid(), choices: { necessary: false, functional: false, analytics: true } });
    expect(parseConsent(raw, NOW)?.choices).toEqual({ necessary: true, functional: false, analytics: true });
  });
});
