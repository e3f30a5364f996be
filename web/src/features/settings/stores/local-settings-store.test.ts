import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_LOCAL_SETTINGS,
  initAppearance,
  LOCAL_SETTINGS_KEY,
  useLocalSettingsStore,
} from './local-settings-store';

const store = () => useLocalSettingsStore.getState();
const saved = () => JSON.parse(localStorage.getItem(LOCAL_SETTINGS_KEY) ?? 'null') as { state: unknown } | null;

/** What another tab's store writes, and the event this tab then receives. */
function writeFromOtherTab(state: unknown) {
  const newValue = JSON.stringify({ state, version: 1 });
  localStorage.setItem(LOCAL_SETTINGS_KEY, newValue);
  window.dispatchEvent(new StorageEvent('storage', { key: LOCAL_SETTINGS_KEY, newValue, storageArea: localStorage }));
}

let stop: (() => void) | undefined;

beforeEach(() => {
  localStorage.clear();
  useLocalSettingsStore.setState(DEFAULT_LOCAL_SETTINGS);
  localStorage.clear();
});

afterEach(() => {
  stop?.();
  stop = undefined;
});

describe('local settings (SPEC §3: kept in the browser only)', () => {
  it('defaults to the light theme, medium font and notifications on', () => {
    expect(DEFAULT_LOCAL_SETTINGS).toEqual({ theme: 'light', fontSize: 'medium', notifications: true });
    expect(store()).toMatchObject(DEFAULT_LOCAL_SETTINGS);
  });

  it('persists every change to localStorage, and nothing else', () => {
    store().setTheme('dark');
    store().setFontSize('large');
    store().setNotifications(false);
    expect(saved()?.state).toEqual({ theme: 'dark', fontSize: 'large', notifications: false });
  });

  it('restores saved values', async () => {
    localStorage.setItem(
      LOCAL_SETTINGS_KEY,
      JSON.stringify({ state: { theme: 'auto', fontSize: 'small', notifications: false }, version: 1 }),
    );
    await useLocalSettingsStore.persist.rehydrate();
    expect(store()).toMatchObject({ theme: 'auto', fontSize: 'small', notifications: false });
  });

  it('falls back to the defaults for hand-edited or outdated values', async () => {
    localStorage.setItem(
      LOCAL_SETTINGS_KEY,
      JSON.stringify({ state: { theme: 'purple', fontSize: 42, notifications: 'yes' }, version: 1 }),
    );
    await useLocalSettingsStore.persist.rehydrate();
    expect(store()).toMatchObject(DEFAULT_LOCAL_SETTINGS);
  });

  it('survives unreadable storage', async () => {
    localStorage.setItem(LOCAL_SETTINGS_KEY, '{not json');
    await useLocalSettingsStore.persist.rehydrate();
    expect(store()).toMatchObject(DEFAULT_LOCAL_SETTINGS);
  });
});

describe('appearance', () => {
  it('puts the theme and font size on <html>, now and on every change', () => {
    stop = initAppearance();
    expect(document.documentElement.dataset.theme).toBe('light');
    expect(document.documentElement.dataset.fontSize).toBe('medium');
    store().setTheme('dark');
    store().setFontSize('small');
    expect(document.documentElement.dataset.theme).toBe('dark');
    expect(document.documentElement.dataset.fontSize).toBe('small');
  });

  it('follows a change made in another tab', async () => {
    stop = initAppearance();
    writeFromOtherTab({ theme: 'dark', fontSize: 'large', notifications: false });
    await vi.waitFor(() => expect(store()).toMatchObject({ theme: 'dark', fontSize: 'large', notifications: false }));
    expect(document.documentElement.dataset.theme).toBe('dark');
    expect(document.documentElement.dataset.fontSize).toBe('large');
  });

  it('ignores storage events about other keys', async () => {
    stop = initAppearance();
    localStorage.setItem(LOCAL_SETTINGS_KEY, JSON.stringify({ state: { theme: 'dark' }, version: 1 }));
    window.dispatchEvent(new StorageEvent('storage', { key: 'token', newValue: 'x', storageArea: localStorage }));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(store().theme).toBe('light');
  });
});
