/**
 * Error codes: the server's (`ERROR_CODES`, generated from server/src/error.rs with their
 * texts in both languages) and the few the client gives failures itself. Every code the
 * client compares against is one of these, so a misspelt code is a type error.
 */
import { ERROR_CODES, ERROR_TEXTS, type ErrorCode } from '@/types/generated';
import { currentLanguage, i18n, type Language } from './i18n';

export type { ErrorCode };

/**
 * The client's own codes, for failures no server answer names: the request got no answer
 * (`network_error`), an answer with no code it knows (`unknown_error`), a chat message
 * not sent because the socket is down (`offline`), or a send that was on its way when the
 * connection dropped and did not arrive (`not_sent`) or may not have (`maybe_not_sent`).
 */
export const CLIENT_ERROR_CODES = ['network_error', 'unknown_error', 'offline', 'not_sent', 'maybe_not_sent'] as const;
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

/** Any code a failure can carry in this client. */
export type AppErrorCode = ErrorCode | ClientErrorCode;

/** Where the text of each client code lives in the client's locales. */
export const CLIENT_ERROR_TEXT_KEYS = {
  network_error: 'errors:networkError',
  unknown_error: 'errors:generic',
  offline: 'chat:errors.offline',
  not_sent: 'chat:errors.notSent',
  maybe_not_sent: 'chat:errors.maybeNotSent',
} as const satisfies Record<ClientErrorCode, string>;

const SERVER_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** Whether a code from an answer or a frame (a plain string on the wire) is one the server has. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && SERVER_CODES.has(code);
}

export function isClientErrorCode(code: unknown): code is ClientErrorCode {
  return typeof code === 'string' && (CLIENT_ERROR_CODES as readonly string[]).includes(code);
}

/** What fills a text's placeholders: `field` is a label to show (not a field's name), `max` a number. */
export interface ErrorTextValues {
  field?: string | undefined;
  max?: number | undefined;
}

/**
 * The server's own text of a code, placeholders filled; null when one of them cannot be
 * (a half-filled "{field} is required" helps nobody).
 */
export function serverErrorText(code: ErrorCode, language: Language, values: ErrorTextValues = {}): string | null {
  let text = ERROR_TEXTS[code][language];
  if (values.field !== undefined) text = text.replaceAll('{field}', values.field);
  if (values.max !== undefined) text = text.replaceAll('{max}', String(values.max));
  return /\{(field|max)\}/.test(text) ? null : text;
}

/**
 * The text of a failure that came without words (an answer with no `message`, a client
 * code): the server's text of its code, else the client's, else the generic one.
 */
export function errorText(code: AppErrorCode, values: ErrorTextValues = {}, language: Language = currentLanguage()): string {
  if (isClientErrorCode(code)) return i18n.t(CLIENT_ERROR_TEXT_KEYS[code], { lng: language });
  return serverErrorText(code, language, values) ?? i18n.t('errors:generic', { lng: language });
}
