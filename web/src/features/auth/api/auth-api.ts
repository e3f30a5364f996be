/** The account calls of docs/api.md, typed. Calls before a session exist are `anonymous`. */
import { api } from '@/lib/api-client';
import type { Language } from '@/lib/i18n';
import type { User, UserSettings } from '@/types/api';

/** Login and registration answer the user plus a session token. */
export type UserWithToken = User & { token: string };

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
  login: (body: LoginRequest) => api.post<UserWithToken>('/auth/login', body, { anonymous: true }),

  sendRegistrationCode: (body: RegisterRequest) =>
    api.post<{ token: string }>('/auth/register/send-code', body, { anonymous: true }),

  verifyRegistration: (body: { token: string; code: string }) =>
    api.post<UserWithToken>('/auth/register/verify', body, { anonymous: true }),

  /** Answers a new registration token; the old one stops working. */
  resendRegistrationCode: (body: { token: string }) =>
    api.post<{ token: string }>('/auth/register/resend-code', body, { anonymous: true }),

  forgotPassword: (body: { email: string; lang: Language }) =>
    api.post<{ token: string }>('/auth/forgot-password', body, { anonymous: true }),

  /** Answers a new single-use token: only that one can set the new password. */
  verifyResetCode: (body: { email: string; code: string; token: string }) =>
    api.post<{ success: true; token: string }>('/auth/verify-reset-code', body, { anonymous: true }),

  resetPassword: (body: { token: string; newPassword: string; confirmPassword: string; lang: Language }) =>
    api.post<{ success: true }>('/auth/reset-password', body, { anonymous: true }),

  getProfile: () => api.get<User | null>('/auth/profile'),

  saveLanguage: (language: Language) =>
    api.put<{ success: true; settings: UserSettings }>('/settings', { language }),
};
