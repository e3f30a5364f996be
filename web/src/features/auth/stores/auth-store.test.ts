import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { getToken, setToken } from '@/lib/token';
import { anna, jsonResponse } from '@/test/fixtures';
import { useAuthDialogStore } from './auth-dialog-store';
import { initialAuthState, useAuthStore } from './auth-store';

const fetchMock = vi.fn<typeof fetch>();
const auth = () => useAuthStore.getState();

function requestBody(call: number): unknown {
  return JSON.parse(fetchMock.mock.calls[call]?.[1]?.body as string);
}

/** A fresh Response per call: a body can be read only once. */
function answerAlways(status: number, body: unknown) {
  fetchMock.mockImplementation(() => Promise.resolve(jsonResponse(status, body)));
}

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  useAuthStore.setState(initialAuthState);
  useAuthDialogStore.getState().close();
  await i18n.changeLanguage('en-US');
});

describe('startup (SPEC §4)', () => {
  it('stays a guest without a stored token, and calls nothing', async () => {
    await auth().init();
    expect(auth().status).toBe('anonymous');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('loads the profile of a stored token and switches to the user’s language', async () => {
    setToken('stored', { remember: true });
    answerAlways(200, anna);

    await auth().init();

    expect(fetchMock.mock.calls[0]?.[0]).toBe('/api/auth/profile');
    expect(auth()).toMatchObject({ status: 'authenticated', token: 'stored', user: anna, settings: anna.settings });
    expect(i18n.language).toBe('hu-HU');
  });

  it.each([
    ['a 401', () => jsonResponse(401, { success: false, code: 'unauthorized', message: 'Unauthorized action' })],
    ['an empty answer', () => jsonResponse(200, null)],
    ['a server error', () => jsonResponse(500, { success: false, code: 'server_error', message: 'x' })],
  ])('logs out and opens the login dialog after %s', async (_case, answer) => {
    setToken('stored', { remember: true });
    fetchMock.mockResolvedValue(answer());

    await auth().init();

    expect(auth().status).toBe('anonymous');
    expect(getToken()).toBeNull();
    expect(useAuthDialogStore.getState().dialog).toBe('login');
  });
});

describe('login', () => {
  it('stores the token for 30 days with remember-me and signs in', async () => {
    answerAlways(200, { ...anna, token: 'jwt' });
    const cookie = vi.spyOn(document, 'cookie', 'set');

    await auth().login({ email: ' anna@example.com ', password: 'secret', rememberMe: true });

    expect(requestBody(0)).toEqual({ email: 'anna@example.com', password: 'secret', rememberMe: true });
    expect(cookie.mock.calls.at(-1)?.[0]).toContain('Max-Age=2592000');
    expect(auth()).toMatchObject({ status: 'authenticated', token: 'jwt' });
    expect(auth().user).not.toHaveProperty('token');
  });

  it('logs out: clears the token and the user', async () => {
    answerAlways(200, { ...anna, token: 'jwt' });
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: false });
    auth().logout();
    expect(auth()).toMatchObject({ status: 'anonymous', token: null, user: null, settings: null });
    expect(getToken()).toBeNull();
  });
});

describe('registration', () => {
  it('sends the details with the interface language, then verifies the code', async () => {
    await i18n.changeLanguage('hu-HU');
    fetchMock
      .mockResolvedValueOnce(jsonResponse(200, { token: 'reg-1' }))
      .mockResolvedValueOnce(jsonResponse(200, { token: 'reg-2' }))
      .mockResolvedValueOnce(jsonResponse(200, { ...anna, token: 'jwt' }));
    const cookie = vi.spyOn(document, 'cookie', 'set');

    await auth().register({
      name: ' Anna Kovács ',
      email: 'anna@example.com',
      password: 'secret1',
      confirmPassword: 'secret1',
      privacyAccepted: true,
    });
    expect(requestBody(0)).toEqual({
      name: 'Anna Kovács',
      email: 'anna@example.com',
      password: 'secret1',
      confirmPassword: 'secret1',
      privacyAccepted: true,
      language: 'hu-HU',
    });
    expect(auth().registration).toEqual({ token: 'reg-1', email: 'anna@example.com' });

    await auth().resend(); // replaces the registration token
    expect(requestBody(1)).toEqual({ token: 'reg-1' });

    await auth().verify(' 042917 ');
    expect(requestBody(2)).toEqual({ token: 'reg-2', code: '042917' });
    expect(cookie.mock.calls.at(-1)?.[0]).toContain('Max-Age=2592000'); // always 30 days
    expect(auth()).toMatchObject({ status: 'authenticated', registration: null });
  });
});

describe('password reset', () => {
  it('exchanges the code for the single-use token, then sets the password', async () => {
    fetchMock
      .mockResolvedValueOnce(jsonResponse(200, { token: 'forgot-token' }))
      .mockResolvedValueOnce(jsonResponse(200, { success: true, token: 'reset-token' }))
      .mockResolvedValueOnce(jsonResponse(200, { success: true }));

    await auth().forgot('anna@example.com');
    expect(requestBody(0)).toEqual({ email: 'anna@example.com', lang: 'en-US' });

    await auth().verifyResetCode('123456');
    expect(requestBody(1)).toEqual({ email: 'anna@example.com', code: '123456', token: 'forgot-token' });
    expect(auth().passwordReset).toMatchObject({ token: 'reset-token', verified: true });

    await auth().resetPassword('new-secret', 'new-secret');
    expect(requestBody(2)).toEqual({
      token: 'reset-token',
      newPassword: 'new-secret',
      confirmPassword: 'new-secret',
      lang: 'en-US',
    });
    expect(auth().passwordReset).toBeNull();
  });
});

describe('other tabs and revoked sessions', () => {
  it('follows a logout made in another tab', async () => {
    answerAlways(200, { ...anna, token: 'jwt' });
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: false });
    auth().syncFromOtherTab(null);
    expect(auth().status).toBe('anonymous');
  });

  it('follows a login made in another tab', async () => {
    setToken('other-tab', { remember: false });
    answerAlways(200, anna);
    auth().syncFromOtherTab('other-tab');
    expect(auth().status).toBe('loading');
    await vi.waitFor(() => expect(auth().status).toBe('authenticated'));
    expect(auth().token).toBe('other-tab');
  });

  it('asks to log in again when the session was revoked, but not after deleting the account', async () => {
    answerAlways(200, { ...anna, token: 'jwt' });
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: false });
    auth().endSession('password_changed');
    expect(auth().status).toBe('anonymous');
    // In Anna's own language, which the login switched to.
    expect(useAuthDialogStore.getState()).toMatchObject({
      dialog: 'login',
      notice: 'A munkamenete lejárt. Kérjük, jelentkezzen be újra.',
    });

    useAuthDialogStore.getState().close();
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: false });
    auth().endSession('account_deleted');
    expect(auth().status).toBe('anonymous');
    expect(useAuthDialogStore.getState().dialog).toBeNull();
  });

  it('a suspended account is signed out and told why, in its language', async () => {
    answerAlways(200, { ...anna, token: 'jwt' });
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: false });
    auth().endSession('account_suspended');
    expect(auth().status).toBe('anonymous');
    expect(useAuthDialogStore.getState()).toMatchObject({
      dialog: 'login',
      notice: 'Ez a fiók fel van függesztve. Kérjük, forduljon az ügyfélszolgálathoz.',
    });
  });

  it('keeps a newer token another tab stored when its own revoked session ends', async () => {
    answerAlways(200, { ...anna, token: 'old' });
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: true });
    // The tab that changed the password stored its fresh token first.
    setToken('fresh', { remember: true });
    answerAlways(200, anna);
    auth().endSession('password_changed');
    expect(getToken()).toBe('fresh');
    await vi.waitFor(() => expect(auth().status).toBe('authenticated'));
    expect(auth().token).toBe('fresh');
    expect(useAuthDialogStore.getState().dialog).toBeNull();
  });

  it('clears the stored token on a revocation only while it is still this tab’s', async () => {
    answerAlways(200, { ...anna, token: 'old' });
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: true });
    auth().endSession('password_changed');
    expect(getToken()).toBeNull();
    expect(auth().status).toBe('anonymous');
  });

  it('signs in again with the fresh token of its own password change after a sibling signed it out', async () => {
    answerAlways(200, { ...anna, token: 'old' });
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: true });
    // A sibling tab ended its session and cleared the shared token (storage event).
    auth().syncFromOtherTab(null);
    expect(auth().status).toBe('anonymous');
    answerAlways(200, anna);
    auth().replaceToken('fresh');
    expect(getToken()).toBe('fresh');
    await vi.waitFor(() => expect(auth().status).toBe('authenticated'));
    expect(auth().token).toBe('fresh');
  });
});

describe('account deletion in this tab', () => {
  const signIn = async () => {
    answerAlways(200, { ...anna, token: 'jwt' });
    await auth().login({ email: 'anna@example.com', password: 'secret', rememberMe: false });
    await i18n.changeLanguage('en-US');
  };

  it('does not ask to log in again when a call or the socket sees the token refused while deleting', async () => {
    await signIn();
    auth().beginAccountDeletion();
    // The socket's close overtook its frame (treated as a revocation), or a call answered 401.
    auth().endSession('password_changed');
    auth().expireSession();
    expect(auth().status).toBe('anonymous');
    expect(useAuthDialogStore.getState().dialog).toBeNull();

    auth().accountDeleted();
    expect(useAuthDialogStore.getState().dialog).toBeNull();
    expect(auth().accountDeletion).toBe('done');
    // A 401 of a call that was on its way opens nothing either.
    auth().expireSession();
    expect(useAuthDialogStore.getState().dialog).toBeNull();
  });

  it('closes a login dialog a racing 401 opened, and the next sign-in is a normal session again', async () => {
    await signIn();
    auth().expireSession();
    expect(useAuthDialogStore.getState().notice).toBe('Your session has ended. Please log in again.');
    auth().accountDeleted();
    expect(useAuthDialogStore.getState()).toMatchObject({ dialog: null, notice: null });

    await signIn();
    expect(auth().accountDeletion).toBeNull();
    auth().expireSession();
    expect(useAuthDialogStore.getState().dialog).toBe('login');
  });

  it('asks to log in when the deletion failed because the session had ended', async () => {
    await signIn();
    auth().beginAccountDeletion();
    auth().expireSession();
    auth().abortAccountDeletion();
    expect(useAuthDialogStore.getState()).toMatchObject({
      dialog: 'login',
      notice: 'Your session has ended. Please log in again.',
    });
  });
});
