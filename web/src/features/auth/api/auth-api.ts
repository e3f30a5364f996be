/** The account calls of docs/api.md, typed. Calls before a session exist are `anonymous`. */
import { api } from '@/lib/api-client';
import type { Language } from '@/lib/i18n';
import type { Done, NewToken, SettingsAnswer, SignedIn, User } from '@/types/generated';

export interface LoginRequest {
  email: string;
  password: string;
  rememberMe: boolean;
}

export interface RegisterRequest {
  name: string;
  email: string;
  password: string;
  confirmPassword: string;
  privacyAccepted: boolean;
  /** Becomes the account's language, and the language of the code's mail. */
  language: Language;
}

export const authApi = {
  login: (body: LoginRequest) => api.post<SignedIn>('/auth/login', body, { anonymous: true }),

  sendRegistrationCode: (body: RegisterRequest) =>
    api.post<NewToken>('/auth/register/send-code', body, { anonymous: true }),

  verifyRegistration: (body: { token: string; code: string }) =>
    api.post<SignedIn>('/auth/register/verify', body, { anonymous: true }),

  /** Answers a new registration token; the old one stops working. */
  resendRegistrationCode: (body: { token: string }) =>
    api.post<NewToken>('/auth/register/resend-code', body, { anonymous: true }),

  forgotPassword: (body: { email: string; lang: Language }) =>
    api.post<NewToken>('/auth/forgot-password', body, { anonymous: true }),

  /** Answers a new single-use token: only that one can set the new password. */
  verifyResetCode: (body: { email: string; code: string; token: string }) =>
    api.post<NewToken>('/auth/verify-reset-code', body, { anonymous: true }),

  resetPassword: (body: { token: string; newPassword: string; confirmPassword: string; lang: Language }) =>
    api.post<Done>('/auth/reset-password', body, { anonymous: true }),

  getProfile: () => api.get<User | null>('/auth/profile'),

  saveLanguage: (language: Language) =>
    api.put<SettingsAnswer>('/settings', { language }),
};
