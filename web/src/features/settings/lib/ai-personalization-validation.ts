/**
 * The AI personalisation rules, mirroring the server's (docs/api.md, PUT /api/settings):
 * both texts trimmed, at most 100 and 2000 characters, no control characters other than
 * line breaks and tabs.
 */
import { MAX_AI_USER_INFO_CHARS, MAX_AI_USER_NAME_CHARS, type AiPersonalization } from '@/types/generated';

export type AiField = 'userName' | 'userInfo';
export type AiFieldError = 'tooLong' | 'invalidCharacters';
export type AiErrors = Partial<Record<AiField, AiFieldError>>;

export const AI_LIMITS: Record<AiField, number> = { userName: MAX_AI_USER_NAME_CHARS, userInfo: MAX_AI_USER_INFO_CHARS };

// Unicode Cc (what the server's char::is_control means), minus tab, LF and CR.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** Length in Unicode characters, as the server counts. */
export function charLength(value: string): number {
  return [...value].length;
}

export function validateAiText(value: string, max: number): AiFieldError | null {
  const text = value.trim();
  if (FORBIDDEN.test(text)) return 'invalidCharacters';
  return charLength(text) > max ? 'tooLong' : null;
}

export function validateAiPersonalization({ userName, userInfo }: Pick<AiPersonalization, AiField>): AiErrors {
  const errors: AiErrors = {};
  const name = validateAiText(userName, MAX_AI_USER_NAME_CHARS);
  if (name) errors.userName = name;
  const info = validateAiText(userInfo, MAX_AI_USER_INFO_CHARS);
  if (info) errors.userInfo = info;
  return errors;
}

/** What is sent: the texts trimmed, as the server stores them. */
export function normalizeAiPersonalization(value: AiPersonalization): AiPersonalization {
  return { enabled: value.enabled, userName: value.userName.trim(), userInfo: value.userInfo.trim() };
}
