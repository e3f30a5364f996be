import { describe, expect, it } from 'vitest';
import { MAX_AI_USER_INFO_CHARS, MAX_AI_USER_NAME_CHARS } from '@/types/generated';
import {
  normalizeAiPersonalization,
  validateAiPersonalization,
  validateAiText,
} from './ai-personalization-validation';

describe('AI personalisation rules (docs/api.md PUT /api/settings)', () => {
  it('accepts empty texts: both are optional', () => {
    expect(validateAiPersonalization({ userName: '', userInfo: '' })).toEqual({});
  });

  it('allows 100 characters for the form of address and 2000 for the text about the user', () => {
    expect(
      validateAiPersonalization({ userName: 'a'.repeat(MAX_AI_USER_NAME_CHARS), userInfo: 'b'.repeat(MAX_AI_USER_INFO_CHARS) }),
    ).toEqual({});
    expect(
      validateAiPersonalization({
        userName: 'a'.repeat(MAX_AI_USER_NAME_CHARS + 1),
        userInfo: 'b'.repeat(MAX_AI_USER_INFO_CHARS + 1),
      }),
    ).toEqual({ userName: 'tooLong', userInfo: 'tooLong' });
  });

  it('counts after trimming, in Unicode characters', () => {
    expect(validateAiText(`  ${'a'.repeat(100)}  `, 100)).toBeNull();
    expect(validateAiText('é'.repeat(100), 100)).toBeNull();
    expect(validateAiText('😀'.repeat(100), 100)).toBeNull();
    expect(validateAiText('😀'.repeat(101), 100)).toBe('tooLong');
  });

  it('allows line breaks and tabs but no other control characters', () => {
    expect(validateAiText('line one\nline two\r\n\tindented', 2000)).toBeNull();
    expect(validateAiText('bell\u0007', 2000)).toBe('invalidCharacters');
    expect(validateAiText('a\u0085b', 2000)).toBe('invalidCharacters');
  });

  it('sends the texts trimmed', () => {
    expect(normalizeAiPersonalization({ enabled: true, userName: ' Anna ', userInfo: '\nTranslator\n' })).toEqual({
      enabled: true,
      userName: 'Anna',
      userInfo: 'Translator',
    });
  });
});
