/**
 * A random Idempotency-Key. `crypto.randomUUID` needs a secure context, and a plain-http
 * install has none; `getRandomValues` works everywhere.
 */
export function randomKey(): string {
  if (typeof crypto.randomUUID === 'function' && globalThis.isSecureContext) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
