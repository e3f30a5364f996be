/**
 * Helpers for the opt-in tests against a running chat-server (server-*.integration.test.ts).
 * Set CHAT_SERVER_URL (e.g. http://127.0.0.1:18080) and CHAT_SERVER_LOG (the server's log
 * file, where its log mail transport writes the verification codes).
 */
import { readFile } from 'node:fs/promises';
import { expect, vi } from 'vitest';

export const SERVER = import.meta.env.CHAT_SERVER_URL;
export const SERVER_LOG = import.meta.env.CHAT_SERVER_LOG;
export const hasServer = Boolean(SERVER && SERVER_LOG);

/** The newest code mailed to `email`, once more than `seen` codes were mailed to it. */
export async function mailedCode(email: string, seen = 0): Promise<string> {
  let found: string | undefined;
  await vi.waitFor(
    async () => {
      // eslint-disable-next-line no-control-regex
      const log = (await readFile(SERVER_LOG!, 'utf8')).replace(/\u001b\[[0-9;]*m/g, '');
      const codes = log
        .split('\n')
        .filter((line) => line.includes(`to=${email} `))
        .map((line) => /subject=.*?(\d{6})/.exec(line)?.[1])
        .filter((code): code is string => Boolean(code));
      expect(codes.length).toBeGreaterThan(seen);
      found = codes.at(-1);
    },
    { timeout: 5000, interval: 100 },
  );
  return found!;
}

export function uniqueEmail(prefix: string): string {
  return `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
}

/** Registers an account with plain fetch calls and answers its session token. */
export async function registerAccount(email: string, password: string): Promise<string> {
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${SERVER}/api${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  };
  const { token } = await post<{ token: string }>('/auth/register/send-code', {
    name: 'Socket Test',
    email,
    password,
    privacyAccepted: true,
    language: 'en-US',
  });
  const code = await mailedCode(email);
  const user = await post<{ token: string }>('/auth/register/verify', { token, code });
  return user.token;
}
