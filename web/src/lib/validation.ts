/**
 * SPEC §5 as pure functions. Each returns the key of its message in the `validation`
 * namespace, or null when the value is fine; components translate the key. The rules
 * mirror the server's (docs/api.md "Input rules"), so a form the client accepts is one the
 * server accepts too, and the server's own message is shown for anything beyond these.
 */
import type { Resources } from '@/locales/resources';
import { CODE_DIGITS, MAX_EMAIL_CHARS, MAX_NAME_CHARS, MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS } from '@/types/generated';

export type ValidationKey = keyof Resources['validation'];
export type ValidationResult = ValidationKey | null;

// Whitespace or a control character anywhere makes an address invalid.
// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_EMAIL = /[\s\u0000-\u001f\u007f]/;
const CODE_PATTERN = new RegExp(`^\\d{${CODE_DIGITS}}$`);

/** Length in Unicode characters, as the server counts (not UTF-16 units). */
function charLength(value: string): number {
  return [...value].length;
}

export function isValidEmail(raw: string): boolean {
  const email = raw.trim();
  if (charLength(email) > MAX_EMAIL_CHARS || FORBIDDEN_IN_EMAIL.test(email)) return false;
  const parts = email.split('@');
  if (parts.length !== 2) return false;
  const [local = '', domain = ''] = parts;
  return (
    local.length > 0 &&
    domain.includes('.') &&
    !domain.startsWith('.') &&
    !domain.endsWith('.') &&
    !domain.includes('..')
  );
}

export function validateEmail(value: string): ValidationResult {
  if (!value.trim()) return 'emailRequired';
  return isValidEmail(value) ? null : 'emailInvalid';
}

/** Login checks only presence: an old password may predate today's length rule. */
export function validateLoginPassword(value: string): ValidationResult {
  return value ? null : 'passwordRequired';
}

/** A password being chosen (registration). Passwords are not trimmed. */
export function validatePassword(value: string): ValidationResult {
  if (!value) return 'passwordRequired';
  return passwordLengthRule(value);
}

/** A new password in the reset and change-password forms. */
export function validateNewPassword(value: string): ValidationResult {
  if (!value) return 'newPasswordRequired';
  return passwordLengthRule(value);
}

function passwordLengthRule(value: string): ValidationResult {
  const length = charLength(value);
  if (length < MIN_PASSWORD_CHARS) return 'passwordMinLength';
  if (length > MAX_PASSWORD_CHARS) return 'passwordMaxLength';
  return null;
}

export function validateCurrentPassword(value: string): ValidationResult {
  return value ? null : 'currentPasswordRequired';
}

export function validatePasswordConfirmation(password: string, confirmation: string): ValidationResult {
  return password === confirmation ? null : 'passwordsMismatch';
}

export function validateName(value: string): ValidationResult {
  const name = value.trim();
  if (!name) return 'nameRequired';
  return charLength(name) > MAX_NAME_CHARS ? 'nameTooLong' : null;
}

export function validatePrivacyAccepted(accepted: boolean): ValidationResult {
  return accepted ? null : 'privacyRequired';
}

export function validateCode(value: string): ValidationResult {
  const code = value.trim();
  if (!code) return 'codeRequired';
  return CODE_PATTERN.test(code) ? null : 'codeFormat';
}

export type FieldErrors<F extends string> = Partial<Record<F, ValidationKey>>;

/**
 * Runs one rule per field and keeps the failures, so a form can show every problem at
 * once: `collectErrors({ email: validateEmail(email), password: … })`.
 */
export function collectErrors<F extends string>(results: Record<F, ValidationResult>): FieldErrors<F> {
  const errors: FieldErrors<F> = {};
  for (const field of Object.keys(results) as F[]) {
    const result = results[field];
    if (result) errors[field] = result;
  }
  return errors;
}

export function hasErrors(errors: FieldErrors<string>): boolean {
  return Object.keys(errors).length > 0;
}
