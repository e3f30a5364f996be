/**
 * A random id: a chat send's `clientId`, a payment's `Idempotency-Key`.
 * `crypto.randomUUID` needs a secure context, and a plain-http install has none;
 * `getRandomValues` works everywhere (32 hex digits then).
 */
export function randomId(): string {
  if (typeof crypto.randomUUID === 'function' && globalThis.isSecureContext) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
