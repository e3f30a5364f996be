/**
 * The session token. The `token` cookie is the source of truth: its lifetime (SPEC §9: 30
 * days with remember-me and after registration, 1 day otherwise) decides how long the
 * session lasts, and the server's websocket upgrade can read it. The same token is kept in
 * localStorage too, because only localStorage fires a `storage` event in the other tabs:
 * that is how a login or logout in one tab reaches the others.
 */

export const TOKEN_KEY = 'token';
/** Whether the token was issued with remember-me, so a replacement keeps its lifetime. */
const REMEMBER_KEY = 'token.remember';

const DAY_SECONDS = 24 * 60 * 60;
export const REMEMBER_DAYS = 30;
export const SESSION_DAYS = 1;

export interface SetTokenOptions {
  /** 30-day cookie instead of a 1-day one. Registration always remembers. */
  remember: boolean;
}

function readCookie(name: string): string | null {
  for (const part of document.cookie.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) {
      const value = rest.join('=');
      return value ? decodeURIComponent(value) : null;
    }
  }
  return null;
}

function writeCookie(name: string, value: string, maxAgeSeconds: number): void {
  // Strict, as the server sets it: other sites never make the browser send it. Secure only
  // over https: a plain-http self-hosted install must still be able to log in.
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${name}=${encodeURIComponent(value)}; Max-Age=${maxAgeSeconds}; Path=/; SameSite=Strict${secure}`;
}

function safeStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    // Storage can be blocked (privacy settings); the cookie alone still works.
    return null;
  }
}

export function getToken(): string | null {
  const fromCookie = readCookie(TOKEN_KEY);
  const storage = safeStorage();
  if (fromCookie) {
    if (storage && storage.getItem(TOKEN_KEY) !== fromCookie) storage.setItem(TOKEN_KEY, fromCookie);
    return fromCookie;
  }
  // The cookie expired: the copy in localStorage is stale too, and must not revive it.
  if (storage?.getItem(TOKEN_KEY)) {
    storage.removeItem(TOKEN_KEY);
    storage.removeItem(REMEMBER_KEY);
  }
  return null;
}

export function setToken(token: string, { remember }: SetTokenOptions): void {
  writeCookie(TOKEN_KEY, token, (remember ? REMEMBER_DAYS : SESSION_DAYS) * DAY_SECONDS);
  const storage = safeStorage();
  storage?.setItem(REMEMBER_KEY, remember ? '1' : '0');
  storage?.setItem(TOKEN_KEY, token);
}

/**
 * Stores a token that replaces the current one with the same lifetime, e.g. the fresh
 * token a password change answers (it keeps the lifetime of the token it replaces).
 */
export function replaceToken(token: string): void {
  setToken(token, { remember: safeStorage()?.getItem(REMEMBER_KEY) !== '0' });
}

/**
 * Forgets the stored token. With `ifStill`, only when the stored token is still that one:
 * a session that ends because its token was revoked or refused must not clear a newer
 * token another tab of the browser stored meanwhile (e.g. after its password change).
 * Returns whether the token was cleared.
 */
export function clearToken(ifStill?: string): boolean {
  if (ifStill !== undefined) {
    const current = getToken();
    if (current !== null && current !== ifStill) return false;
  }
  writeCookie(TOKEN_KEY, '', 0);
  const storage = safeStorage();
  storage?.removeItem(TOKEN_KEY);
  storage?.removeItem(REMEMBER_KEY);
  return true;
}

/**
 * Calls `listener` when another tab logs in, logs out or swaps the token. The event never
 * fires in the tab that made the change, so a tab never reacts to its own writes.
 * Returns the unsubscribe function.
 */
export function onTokenChangeInOtherTab(listener: (token: string | null) => void): () => void {
  const handler = (event: StorageEvent) => {
    // `key === null` means another tab cleared the whole storage.
    if (event.key !== TOKEN_KEY && event.key !== null) return;
    if (event.storageArea && event.storageArea !== safeStorage()) return;
    listener(event.newValue ?? null);
  };
  window.addEventListener('storage', handler);
  return () => window.removeEventListener('storage', handler);
}
