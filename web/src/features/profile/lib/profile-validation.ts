/**
 * The profile forms' rules (SPEC §5 "Profile"), as pure functions over the shared rules of
 * src/lib/validation.ts. Each error is a key: `validation` namespace keys, plus the few
 * that only this feature needs (translated from the `profile` namespace).
 */
import {
  validateCurrentPassword,
  validateNewPassword,
  validatePasswordConfirmation,
  type ValidationKey,
} from '@/lib/validation';

/** What the server accepts (docs/api.md, POST /api/auth/profile/image). */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export const IMAGE_ACCEPT = IMAGE_TYPES.join(',');
export const IMAGE_MAX_MB = 5;
export const IMAGE_MAX_BYTES = IMAGE_MAX_MB * 1024 * 1024;

export type ImageError = 'type' | 'tooLarge' | 'empty';

/**
 * Checks a chosen file before it is sent. The server recognises the type from the
 * content, so a file whose browser-reported type is empty (some systems give none) is
 * left to the server.
 */
export function validateImageFile(file: Pick<File, 'type' | 'size'>): ImageError | null {
  if (file.type && !(IMAGE_TYPES as readonly string[]).includes(file.type.toLowerCase())) return 'type';
  if (file.size === 0) return 'empty';
  if (file.size > IMAGE_MAX_BYTES) return 'tooLarge';
  return null;
}

export interface PasswordChangeInput {
  currentPassword: string;
  newPassword: string;
  confirmPassword: string;
}

export type PasswordField = keyof PasswordChangeInput;
/** `confirmPasswordRequired` lives in the profile namespace (`password.confirmRequired`). */
export type PasswordFormError = ValidationKey | 'confirmPasswordRequired';
export type PasswordFormErrors = Partial<Record<PasswordField, PasswordFormError>>;

/** SPEC §5: current, new and confirmation required; new ≥ 6 characters; they must match. */
export function validatePasswordChange({
  currentPassword,
  newPassword,
  confirmPassword,
}: PasswordChangeInput): PasswordFormErrors {
  const errors: PasswordFormErrors = {};
  const current = validateCurrentPassword(currentPassword);
  if (current) errors.currentPassword = current;
  const next = validateNewPassword(newPassword);
  if (next) errors.newPassword = next;
  if (!confirmPassword) errors.confirmPassword = 'confirmPasswordRequired';
  else {
    const mismatch = validatePasswordConfirmation(newPassword, confirmPassword);
    if (mismatch) errors.confirmPassword = mismatch;
  }
  return errors;
}
