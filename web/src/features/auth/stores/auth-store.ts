/**
 * The session: token, user and server-side settings, with the account flows of SPEC §4.
 * Side effects outside the session (the websocket, cross-tab sync, the 401 handler) are
 * wired by the app (src/app/bootstrap.ts), so this store can be tested with fetch alone.
 */
import { create } from 'zustand';
import {
  currentLanguage,
  i18n,
  rememberGuestLanguage,
  setLanguage,
  type Language,
} from '@/lib/i18n';
import { clearToken, getToken, replaceToken as storeReplacedToken, setToken } from '@/lib/token';
import type { RevokeReason } from '@/lib/socket-protocol';
import type { Settings, User } from '@/types/generated';
import { toast } from '@/components/toast';
import { authApi, type LoginRequest, type RegisterRequest } from '../api/auth-api';
import { closeAuthDialog, openAuthDialog } from './auth-dialog-store';

export type AuthStatus =
  /** No token. */
  | 'anonymous'
  /** A stored token, its profile not loaded yet. */
  | 'loading'
  | 'authenticated';

export interface AuthState {
  token: string | null;
  user: User | null;
  settings: Settings | null;
  status: AuthStatus;
  /** SPEC §3 "registration token, registration email": between send-code and verify. */
  registration: { token: string; email: string } | null;
  /** Between forgot-password and reset-password; `verified` once the code was accepted. */
  passwordReset: { token: string; email: string; verified: boolean } | null;
  /**
   * This tab asked for the account's deletion (`pending`) or saw it happen (`done`): a 401
   * or a revoked socket then means the account is gone, not that the session expired, so
   * no login dialog asks to log in again. Cleared by the next sign-in.
   */
  accountDeletion: 'pending' | 'done' | null;
}

export interface AuthActions {
  /** Startup: a stored token loads the profile. */
  init: () => Promise<void>;
  /** Fetches the profile with the stored token; on failure logs out and opens login. */
  loadProfile: () => Promise<User | null>;
  login: (input: LoginRequest) => Promise<User>;
  /** Step 1 of registration: mails a code. The interface language goes along. */
  register: (input: Omit<RegisterRequest, 'language'>) => Promise<void>;
  /** Step 2: the code; the user is then logged in for 30 days. */
  verify: (code: string) => Promise<User>;
  resend: () => Promise<void>;
  forgot: (email: string) => Promise<void>;
  verifyResetCode: (code: string) => Promise<void>;
  resetPassword: (newPassword: string, confirmPassword: string) => Promise<void>;
  logout: () => void;
  /** A 401 or a refused startup token: log out and ask for a new login. */
  expireSession: () => void;
  /** The server ended every session (socket `session.ended`). */
  endSession: (reason: RevokeReason | 'unauthorized') => void;
  /**
   * The account is gone (deleted in this tab, or `session.revoked` account_deleted): signed
   * out with a neutral notice, and no login dialog asking to log in again.
   */
  accountDeleted: () => void;
  /** The profile page is about to delete the account (see `accountDeletion`). */
  beginAccountDeletion: () => void;
  /** The deletion failed: a later 401 is an expired session again. */
  abortAccountDeletion: () => void;
  /** Settings changed (settings page, or `settings.updated` from another tab). */
  applySettings: (settings: Settings) => void;
  updateUser: (changes: Partial<User>) => void;
  changeLanguage: (language: Language) => Promise<void>;
  /** A password change answered a fresh token for this tab. */
  replaceToken: (token: string) => void;
  /** Another tab logged in, out, or swapped the token. */
  syncFromOtherTab: (token: string | null) => void;
}

export type AuthStore = AuthState & AuthActions;

const signedOut: Pick<AuthState, 'token' | 'user' | 'settings' | 'status'> = {
  token: null,
  user: null,
  settings: null,
  status: 'anonymous',
};

export const initialAuthState: AuthState = {
  ...signedOut,
  registration: null,
  passwordReset: null,
  accountDeletion: null,
};

export const useAuthStore = create<AuthStore>()((set, get) => {
  /** The one way into the signed-in state, so user, settings and language agree. */
  const signIn = (user: User, token: string) => {
    set({ token, user, settings: user.settings, status: 'authenticated', accountDeletion: null });
    // A dialog left open (e.g. login here while another tab logged in) has no purpose now.
    closeAuthDialog();
    void setLanguage(user.settings.language);
  };

  /**
   * Signs this tab out after its token was revoked or refused. Tabs share the stored
   * token: it is cleared only if it is still the one this tab used, so a newer token
   * another tab stored meanwhile (its password change, a login) survives.
   */
  const endWithTokenOf = (used: string | null) => {
    if (used) clearToken(used);
    else clearToken();
    set({ ...signedOut, registration: null, passwordReset: null });
  };

  /**
   * Another tab stored a newer token than the one this tab's session ended with (e.g. it
   * changed the password): continue with that one instead of signing out.
   */
  const adoptNewerToken = (): boolean => {
    const used = get().token;
    const stored = getToken();
    if (!used || !stored || stored === used) return false;
    get().syncFromOtherTab(stored);
    return true;
  };

  const requireRegistration = () => {
    const registration = get().registration;
    if (!registration) throw new Error('No registration in progress');
    return registration;
  };

  const requirePasswordReset = () => {
    const reset = get().passwordReset;
    if (!reset) throw new Error('No password reset in progress');
    return reset;
  };

  return {
    ...initialAuthState,

    init: async () => {
      const token = getToken();
      if (!token) {
        set(signedOut);
        return;
      }
      set({ token, status: 'loading' });
      await get().loadProfile();
    },

    loadProfile: async () => {
      const token = get().token ?? getToken();
      if (!token) {
        set(signedOut);
        return null;
      }
      try {
        const user = await authApi.getProfile();
        if (!user?._id) throw new Error('empty profile');
        // A login in this or another tab may have replaced the token meanwhile.
        if (get().token !== token) return get().user;
        signIn(user, token);
        return user;
      } catch {
        // SPEC §4: a profile fetch that fails or returns nothing logs out and asks to log in.
        if (get().token === token) get().expireSession();
        return null;
      }
    },

    login: async ({ email, password, rememberMe }) => {
      const { token, expiresAt: _expiresAt, ...user } = await authApi.login({ email: email.trim(), password, rememberMe });
      setToken(token, { remember: rememberMe });
      signIn(user, token);
      return user;
    },

    register: async (input) => {
      const email = input.email.trim();
      const { token } = await authApi.sendRegistrationCode({
        ...input,
        name: input.name.trim(),
        email,
        language: currentLanguage(),
      });
      set({ registration: { token, email } });
    },

    verify: async (code) => {
      const registration = requireRegistration();
      const { token, expiresAt: _expiresAt, ...user } = await authApi.verifyRegistration({
        token: registration.token,
        code: code.trim(),
      });
      // SPEC §9: always 30 days after registration.
      setToken(token, { remember: true });
      set({ registration: null });
      signIn(user, token);
      return user;
    },

    resend: async () => {
      const registration = requireRegistration();
      const { token } = await authApi.resendRegistrationCode({ token: registration.token });
      set({ registration: { ...registration, token } });
    },

    forgot: async (rawEmail) => {
      const email = rawEmail.trim();
      const { token } = await authApi.forgotPassword({ email, lang: currentLanguage() });
      set({ passwordReset: { token, email, verified: false } });
    },

    verifyResetCode: async (code) => {
      const reset = requirePasswordReset();
      const { token } = await authApi.verifyResetCode({ email: reset.email, code: code.trim(), token: reset.token });
      set({ passwordReset: { ...reset, token, verified: true } });
    },

    resetPassword: async (newPassword, confirmPassword) => {
      const reset = requirePasswordReset();
      if (!reset.verified) throw new Error('The reset code was not verified yet');
      await authApi.resetPassword({ token: reset.token, newPassword, confirmPassword, lang: currentLanguage() });
      // SPEC §4: the temporary token is cleared afterwards.
      set({ passwordReset: null });
    },

    logout: () => {
      clearToken();
      set({ ...signedOut, registration: null, passwordReset: null });
    },

    expireSession: () => {
      if (get().accountDeletion) {
        // The account is being deleted here, or was: its token stops working by design.
        endWithTokenOf(get().token);
        return;
      }
      const hadSession = get().status !== 'anonymous';
      if (hadSession && adoptNewerToken()) return;
      endWithTokenOf(get().token);
      openAuthDialog('login', hadSession ? i18n.t('auth:session.ended') : undefined);
    },

    endSession: (reason) => {
      if (get().status === 'anonymous') return;
      if (reason === 'account_deleted') {
        get().accountDeleted();
        return;
      }
      if (reason === 'account_suspended') {
        // Not "log in again": logging in is refused too until an admin lifts it.
        endWithTokenOf(get().token);
        openAuthDialog('login', i18n.t('auth:session.suspended'));
        return;
      }
      get().expireSession();
    },

    accountDeleted: () => {
      const { status, accountDeletion } = get();
      // Once: the answer to this tab's delete and the server's revocation frame race.
      const told = accountDeletion === 'done';
      const concerned = status !== 'anonymous' || accountDeletion === 'pending';
      endWithTokenOf(get().token);
      set({ accountDeletion: 'done' });
      // A login dialog opened by a 401 that raced the deletion has nothing to ask.
      closeAuthDialog();
      if (concerned && !told) toast.info(i18n.t('auth:session.accountDeleted'));
    },

    beginAccountDeletion: () => set({ accountDeletion: 'pending' }),

    abortAccountDeletion: () => {
      if (get().accountDeletion !== 'pending') return;
      set({ accountDeletion: null });
      // Refused because the session had ended meanwhile: say so, as a 401 would have.
      if (get().status === 'anonymous') openAuthDialog('login', i18n.t('auth:session.ended'));
    },

    applySettings: (settings) => {
      const user = get().user;
      set({ settings, user: user ? { ...user, settings } : user });
      void setLanguage(settings.language);
    },

    updateUser: (changes) => {
      const user = get().user;
      if (!user) return;
      const next = { ...user, ...changes };
      set({ user: next, settings: next.settings });
    },

    changeLanguage: async (language) => {
      await setLanguage(language);
      // Kept for the next visit as a guest too, e.g. after logging out.
      rememberGuestLanguage(language);
      if (get().status !== 'authenticated') return;
      try {
        const { settings } = await authApi.saveLanguage(language);
        get().applySettings(settings);
      } catch {
        // The api-client already reported it; the interface keeps the chosen language.
      }
    },

    replaceToken: (token) => {
      storeReplacedToken(token);
      if (get().status === 'anonymous') {
        // A sibling tab's logout signed this tab out while its password change was on
        // its way: the fresh token it answered still holds, so sign in again with it.
        set({ token, user: null, settings: null, status: 'loading' });
        void get().loadProfile();
        return;
      }
      set({ token });
    },

    syncFromOtherTab: (token) => {
      if (!token) {
        if (get().status !== 'anonymous') set({ ...signedOut, registration: null, passwordReset: null });
        return;
      }
      if (token === get().token) return;
      set({ token, user: null, settings: null, status: 'loading' });
      void get().loadProfile();
    },
  };
});

export const selectIsAuthenticated = (state: AuthState) => state.status === 'authenticated';
export const selectAuthStatus = (state: AuthState) => state.status;
export const selectUser = (state: AuthState) => state.user;
export const selectSettings = (state: AuthState) => state.settings;
