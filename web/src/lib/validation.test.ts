import { describe, expect, it } from 'vitest';
import {
  collectErrors,
  hasErrors,
  isValidEmail,
  validateCode,
  validateCurrentPassword,
  validateEmail,
  validateLoginPassword,
  validateName,
  validateNewPassword,
  validatePassword,
  validatePasswordConfirmation,
  validatePrivacyAccepted,
} from './validation';

describe('email (SPEC §5: required; invalid format)', () => {
  it('is required', () => {
    expect(validateEmail('')).toBe('emailRequired');
    expect(validateEmail('   ')).toBe('emailRequired');
  });

  it.each(['anna@example.com', ' Anna@Example.com ', 'a.b+c@sub.example.hu'])('accepts %s', (email) => {
    expect(validateEmail(email)).toBeNull();
  });

  it.each([
    'anna',
    'anna@',
    '@example.com',
    'anna@example',
    'anna@@example.com',
    'an na@example.com',
    'anna@.example.com',
    'anna@example.com.',
    'anna@example..com',
    'anna@exa\u0007mple.com',
  ])('rejects %j', (email) => {
    expect(validateEmail(email)).toBe('emailInvalid');
  });

  it('rejects addresses over 254 characters, as the server does', () => {
    const long = `${'a'.repeat(250)}@ex.com`;
    expect(isValidEmail(long)).toBe(false);
  });
});

describe('passwords (required; at least 6 characters; must match)', () => {
  it('requires a password', () => {
    expect(validatePassword('')).toBe('passwordRequired');
    expect(validateLoginPassword('')).toBe('passwordRequired');
  });

  it('needs at least 6 characters, counted as characters not UTF-16 units', () => {
    expect(validatePassword('12345')).toBe('passwordMinLength');
    expect(validatePassword('123456')).toBeNull();
    expect(validatePassword('😀😀😀')).toBe('passwordMinLength'); // 3 characters, 6 code units
  });

  it('allows at most 128 characters', () => {
    expect(validatePassword('x'.repeat(128))).toBeNull();
    expect(validatePassword('x'.repeat(129))).toBe('passwordMaxLength');
  });

  it('does not trim: spaces count', () => {
    expect(validatePassword('      ')).toBeNull();
  });

  it('applies no length rule at login', () => {
    expect(validateLoginPassword('1')).toBeNull();
  });

  it('checks the new password in reset and change forms', () => {
    expect(validateNewPassword('')).toBe('newPasswordRequired');
    expect(validateNewPassword('abc')).toBe('passwordMinLength');
    expect(validateNewPassword('abcdef')).toBeNull();
  });

  it('requires the current password when changing it', () => {
    expect(validateCurrentPassword('')).toBe('currentPasswordRequired');
    expect(validateCurrentPassword('x')).toBeNull();
  });

  it('requires the confirmation to match', () => {
    expect(validatePasswordConfirmation('secret1', 'secret2')).toBe('passwordsMismatch');
    expect(validatePasswordConfirmation('secret1', '')).toBe('passwordsMismatch');
    expect(validatePasswordConfirmation('secret1', 'secret1')).toBeNull();
  });
});

describe('name, privacy and code', () => {
  it('requires a name, trimmed, of at most 100 characters', () => {
    expect(validateName('  ')).toBe('nameRequired');
    expect(validateName(' Anna ')).toBeNull();
    expect(validateName('x'.repeat(101))).toBe('nameTooLong');
  });

  it('requires the privacy policy to be accepted', () => {
    expect(validatePrivacyAccepted(false)).toBe('privacyRequired');
    expect(validatePrivacyAccepted(true)).toBeNull();
  });

  it('requires a 6-digit code', () => {
    expect(validateCode('')).toBe('codeRequired');
    expect(validateCode('12345')).toBe('codeFormat');
    expect(validateCode('1234567')).toBe('codeFormat');
    expect(validateCode('12a456')).toBe('codeFormat');
    expect(validateCode(' 042917 ')).toBeNull(); // leading zeros count; the server trims
  });
});

describe('collectErrors', () => {
  it('keeps only the failed fields', () => {
    const errors = collectErrors({ email: validateEmail(''), password: validatePassword('secret') });
    expect(errors).toEqual({ email: 'emailRequired' });
    expect(hasErrors(errors)).toBe(true);
    expect(hasErrors(collectErrors({ email: null }))).toBe(false);
  });
});
