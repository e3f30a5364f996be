/**
 * The auth store and api-client against a running chat-server: registration with the
 * e-mailed code (after a resend), the profile, the saved language, a password change,
 * and login. Opt-in: see server-helpers.ts and web/README.md; skipped without a server.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '@/features/auth';
import { api } from '@/lib/api-client';
import { i18n } from '@/lib/i18n';
import { getToken, setToken } from '@/lib/token';
import { hasServer, mailedCode, SERVER, uniqueEmail } from './server-helpers';

const auth = () => useAuthStore.getState();

describe.skipIf(!hasServer)('auth flows against a running chat-server', () => {
  const email = uniqueEmail('web-auth');
  const realFetch = globalThis.fetch;
  // The steps are one session, while the test setup clears cookies and storage after
  // every test: carry the token over.
  let carriedToken: string | null = null;

  beforeAll(async () => {
    auth().logout();
    await i18n.changeLanguage('en-US');
  });

  beforeEach(() => {
    // The api-client calls `/api/…` on its own origin; here that origin is the server.
    // (Stubbed before each test: the config unstubs globals before each one.)
    vi.stubGlobal('fetch', (input: string, init?: RequestInit) => realFetch(`${SERVER}${input}`, init));
    if (carriedToken) setToken(carriedToken, { remember: true });
  });

  afterEach(() => {
    carriedToken = getToken();
  });

  afterAll(() => auth().logout());

  it('registers with the e-mailed code (after a resend) and loads the profile', async () => {
    await auth().register({
      name: 'Web Test',
      email,
      password: 'secret1',
      confirmPassword: 'secret1',
      privacyAccepted: true,
    });
    await mailedCode(email);
    await auth().resend();
    const code = await mailedCode(email, 1);

    const user = await auth().verify(code);
    expect(user.email).toBe(email);
    expect(user.settings.language).toBe('en-US');
    expect(getToken()).toBe(auth().token);

    const profile = await auth().loadProfile();
    expect(profile?._id).toBe(user._id);
  });

  it('refuses a wrong code with the server’s message', async () => {
    const other = uniqueEmail('web-auth-wrong');
    await auth().register({
      name: 'Wrong Code',
      email: other,
      password: 'secret1',
      confirmPassword: 'secret1',
      privacyAccepted: true,
    });
    const code = await mailedCode(other);
    const wrong = code === '000000' ? '111111' : '000000';
    await expect(auth().verify(wrong)).rejects.toMatchObject({ status: 400, code: 'invalid_code', message: 'Invalid code' });
  });

  it('saves the language in the settings and speaks it afterwards', async () => {
    await auth().changeLanguage('hu-HU');
    expect(auth().settings?.language).toBe('hu-HU');
    expect(i18n.language).toBe('hu-HU');
    await expect(api.put('/auth/password', { currentPassword: 'nope', newPassword: 'secret2' })).rejects.toMatchObject({
      code: 'wrong_password',
      message: 'A jelenlegi jelszó helytelen',
    });
  });

  it('changes the password and keeps this tab signed in with the new token', async () => {
    const oldToken = getToken();
    const { token } = await api.put<{ success: true; token: string }>('/auth/password', {
      currentPassword: 'secret1',
      newPassword: 'secret2',
      confirmPassword: 'secret2',
    });
    auth().replaceToken(token);
    expect(getToken()).toBe(token);
    expect(token).not.toBe(oldToken);
    expect((await auth().loadProfile())?.email).toBe(email);
  });

  it('logs in with the new password, and not with the old one', async () => {
    auth().logout();
    await expect(auth().login({ email, password: 'secret1', rememberMe: false })).rejects.toMatchObject({
      status: 401,
      code: 'invalid_credentials',
    });
    const user = await auth().login({ email, password: 'secret2', rememberMe: true });
    expect(user.email).toBe(email);
    expect(auth().status).toBe('authenticated');
  });
});
