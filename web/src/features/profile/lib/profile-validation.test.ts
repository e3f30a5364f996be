import { describe, expect, it } from 'vitest';
import { IMAGE_MAX_BYTES, validateImageFile, validatePasswordChange } from './profile-validation';

describe('validatePasswordChange (SPEC §5 "Profile")', () => {
  const valid = { currentPassword: 'old', newPassword: 'secret1', confirmPassword: 'secret1' };

  it('accepts a complete, matching change', () => {
    expect(validatePasswordChange(valid)).toEqual({});
  });

  it('requires all three fields', () => {
    expect(validatePasswordChange({ currentPassword: '', newPassword: '', confirmPassword: '' })).toEqual({
      currentPassword: 'currentPasswordRequired',
      newPassword: 'newPasswordRequired',
      confirmPassword: 'confirmPasswordRequired',
    });
  });

  it('applies no length rule to the current password (it may predate the rule)', () => {
    expect(validatePasswordChange({ ...valid, currentPassword: 'x' })).toEqual({});
  });

  it('wants a new password of at least 6 and at most 128 characters, counted as characters', () => {
    expect(validatePasswordChange({ ...valid, newPassword: '12345', confirmPassword: '12345' })).toEqual({
      newPassword: 'passwordMinLength',
    });
    expect(validatePasswordChange({ ...valid, newPassword: '123456', confirmPassword: '123456' })).toEqual({});
    // Six characters, twelve UTF-16 units.
    const emoji = '😀😀😀😀😀';
    expect(validatePasswordChange({ ...valid, newPassword: emoji, confirmPassword: emoji })).toEqual({
      newPassword: 'passwordMinLength',
    });
    const long = 'a'.repeat(129);
    expect(validatePasswordChange({ ...valid, newPassword: long, confirmPassword: long })).toEqual({
      newPassword: 'passwordMaxLength',
    });
  });

  it('reports a confirmation that differs', () => {
    expect(validatePasswordChange({ ...valid, confirmPassword: 'secret2' })).toEqual({
      confirmPassword: 'passwordsMismatch',
    });
  });

  it('does not trim passwords', () => {
    expect(validatePasswordChange({ ...valid, confirmPassword: 'secret1 ' })).toEqual({
      confirmPassword: 'passwordsMismatch',
    });
  });
});

describe('validateImageFile', () => {
  it.each(['image/jpeg', 'image/png', 'image/webp', 'IMAGE/PNG'])('accepts %s', (type) => {
    expect(validateImageFile({ type, size: 1000 })).toBeNull();
  });

  it.each(['image/gif', 'image/heic', 'application/pdf'])('refuses %s', (type) => {
    expect(validateImageFile({ type, size: 1000 })).toBe('type');
  });

  it('leaves a file without a reported type to the server, which reads the content', () => {
    expect(validateImageFile({ type: '', size: 1000 })).toBeNull();
  });

  it('refuses empty files and files over 5 MB', () => {
    expect(validateImageFile({ type: 'image/png', size: 0 })).toBe('empty');
    expect(validateImageFile({ type: 'image/png', size: IMAGE_MAX_BYTES })).toBeNull();
    expect(validateImageFile({ type: 'image/png', size: IMAGE_MAX_BYTES + 1 })).toBe('tooLarge');
  });
});
