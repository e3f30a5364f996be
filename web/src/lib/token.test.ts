import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearToken, getToken, onTokenChangeInOtherTab, replaceToken, setToken } from './token';

/** jsdom keeps cookie attributes to itself, so spy on what is written. */
function cookieWrites() {
  const descriptor = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie')!;
  const writes: string[] = [];
  vi.spyOn(document, 'cookie', 'set').mockImplementation((value: string) => {
    writes.push(value);
    descriptor.set!.call(document, value);
  });
  return writes;
}

describe('token storage', () => {
  afterEach(() => vi.restoreAllMocks());

  it('stores a remembered token for 30 days in the cookie and in localStorage', () => {
    const writes = cookieWrites();
    setToken('abc', { remember: true });
    expect(writes.at(-1)).toBe('token=abc; Max-Age=2592000; Path=/; SameSite=Strict');
    expect(localStorage.getItem('token')).toBe('abc');
    expect(getToken()).toBe('abc');
  });

  it('stores a session token for 1 day', () => {
    const writes = cookieWrites();
    setToken('abc', { remember: false });
    expect(writes.at(-1)).toContain('Max-Age=86400');
  });

  it('keeps the lifetime when a password change replaces the token', () => {
    const writes = cookieWrites();
    setToken('old', { remember: false });
    replaceToken('new');
    expect(writes.at(-1)).toBe('token=new; Max-Age=86400; Path=/; SameSite=Strict');
    expect(getToken()).toBe('new');
  });

  it('clears only the token it was told about when asked to', () => {
    setToken('newer', { remember: true });
    expect(clearToken('older')).toBe(false);
    expect(getToken()).toBe('newer');
    expect(clearToken('newer')).toBe(true);
    expect(getToken()).toBeNull();
  });

  it('clears both copies', () => {
    setToken('abc', { remember: true });
    clearToken();
    expect(getToken()).toBeNull();
    expect(localStorage.getItem('token')).toBeNull();
  });

  it('does not revive a token whose cookie expired', () => {
    localStorage.setItem('token', 'stale');
    expect(getToken()).toBeNull();
    expect(localStorage.getItem('token')).toBeNull();
  });
});

describe('other tabs', () => {
  it('reports a login or logout made in another tab', () => {
    const listener = vi.fn();
    const stop = onTokenChangeInOtherTab(listener);
    window.dispatchEvent(new StorageEvent('storage', { key: 'token', newValue: 'fresh', storageArea: localStorage }));
    window.dispatchEvent(new StorageEvent('storage', { key: 'token', newValue: null, storageArea: localStorage }));
    window.dispatchEvent(new StorageEvent('storage', { key: null, storageArea: localStorage })); // storage cleared
    window.dispatchEvent(new StorageEvent('storage', { key: 'local-settings', newValue: '{}', storageArea: localStorage }));
    stop();
    window.dispatchEvent(new StorageEvent('storage', { key: 'token', newValue: 'late', storageArea: localStorage }));
    expect(listener.mock.calls).toEqual([['fresh'], [null], [null]]);
  });
});
