/**
 * The one place that talks HTTP to the server (SPEC §7, §8; docs/api.md). Every call goes
 * to `/api` on the page's own origin with the bearer token, JSON in and out, and
 * `Accept-Language` so the server's messages come back in the interface language.
 *
 * Errors (SPEC §8):
 * - status >= 500: a negative toast "Server error occurred", 5000 ms, top;
 * - network failure: a negative toast "Network error occurred";
 * - 401 on any call except /api/subscription: the stored token is cleared and the
 *   unauthorized handler runs (the app opens the login dialog), unless another tab has
 *   meanwhile stored a newer token than the one the call sent, which is kept;
 * - otherwise the server's `message`; without one, the server's text of its `code`
 *   (`ERROR_TEXTS`), else "An error occurred".
 * Every failure rejects with an {@link ApiError}, so callers can show it inline too.
 */
import { toast } from '@/components/toast/toast-store';
import type { ErrorAnswer } from '@/types/generated';
import { isErrorCode, serverErrorText, type AppErrorCode } from './error-codes';
import { currentLanguage, i18n } from './i18n';
import { clearToken, getToken } from './token';

export const API_BASE = '/api';
/** SPEC §9: the error toast stays 5000 ms at the top. */
export const ERROR_TOAST_TIMEOUT = 5000;
/** SPEC §8: a 401 here does not end the session. */
const PATHS_WITHOUT_401_LOGOUT = ['/subscription'];

export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** HTTP status; 0 when the request never got an answer. */
  readonly status: number;
  /** The server's stable code, or `network_error` / `unknown_error` from the client. */
  readonly code: AppErrorCode;
  readonly field: string | undefined;
  /** Seconds from a 429's `Retry-After`. */
  readonly retryAfter: number | undefined;
  /**
   * False when `message` is the client's generic fallback: the server sent no message,
   * and has no text of its own for the code.
   */
  readonly fromServer: boolean;

  constructor(init: {
    status: number;
    code: AppErrorCode;
    message: string;
    field?: string | undefined;
    retryAfter?: number | undefined;
    fromServer?: boolean;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.field = init.field;
    this.retryAfter = init.retryAfter;
    this.fromServer = init.fromServer ?? false;
  }

  /** Server and network failures were already toasted by the client. */
  get alreadyNotified(): boolean {
    return this.status === 0 || this.status >= 500;
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

/**
 * A 401, or a 403 `account_suspended` (an admin suspended the account: every call of its
 * tokens answers it), ends the session this call's token belonged to.
 */
function endsSession(status: number, code: string): boolean {
  return status === 401 || (status === 403 && code === 'account_suspended');
}

type UnauthorizedHandler = (error: ApiError) => void;
let unauthorizedHandler: UnauthorizedHandler | null = null;

/**
 * Set by the app at start-up: lib code must not import features, yet a 401 has to reach
 * the auth store (log out) and the auth dialogs (open login).
 */
export function setUnauthorizedHandler(handler: UnauthorizedHandler | null): void {
  unauthorizedHandler = handler;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Sent as JSON, or as is when it is FormData (multipart uploads). */
  body?: unknown;
  signal?: AbortSignal;
  /**
   * For calls made before there is a session (login, registration, password reset): no
   * token is sent, and a 401 (wrong password) is the call's own answer, not an expired
   * session, so it neither clears the token nor opens the login dialog.
   */
  anonymous?: boolean;
  /**
   * Extra request headers, e.g. `Idempotency-Key`. They are added to the client's own
   * (`Accept`, `Accept-Language`, `Content-Type`), which they may override;
   * `Authorization` always comes from the stored token.
   */
  headers?: Record<string, string>;
  /** The answer is a file (e.g. an invoice PDF): resolve with its bytes, not JSON. */
  asBlob?: boolean;
  /**
   * With `asBlob`: told the bytes received so far as they stream in, and the total when
   * the answer says it (`Content-Length`; a streamed zip has none).
   */
  onProgress?: (received: number, total: number | null) => void;
}

/** Reads a file answer chunk by chunk, telling how much has come. */
async function readBlob(response: Response, onProgress: (received: number, total: number | null) => void): Promise<Blob> {
  const length = Number(response.headers.get('Content-Length'));
  const total = Number.isFinite(length) && length > 0 ? length : null;
  const type = response.headers.get('Content-Type') ?? '';
  if (!response.body) return response.blob();
  const reader = response.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let received = 0;
  onProgress(0, total);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.byteLength;
    onProgress(received, total);
  }
  return new Blob(chunks, { type });
}

/** An error answer is read field by field: it may come from a proxy rather than the server. */
function isErrorBody(value: unknown): value is Partial<Record<keyof ErrorAnswer, unknown>> {
  return typeof value === 'object' && value !== null;
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function retryAfterSeconds(response: Response): number | undefined {
  const value = Number(response.headers.get('Retry-After'));
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

function errorFromResponse(response: Response, payload: unknown): ApiError {
  const body = isErrorBody(payload) ? payload : {};
  const code = isErrorCode(body.code) ? body.code : null;
  if (response.status >= 500) {
    return new ApiError({
      status: response.status,
      code: code ?? 'server_error',
      message: i18n.t('errors:serverError'),
    });
  }
  const field = typeof body.field === 'string' ? body.field : undefined;
  // The server always words its errors; its text of the code stands in when they are
  // missing. A `{field}` in it is left to the generic text: the answer names the field,
  // not how to call it.
  const message =
    (typeof body.message === 'string' && body.message.trim() ? body.message : null) ??
    (code ? serverErrorText(code, currentLanguage()) : null);
  return new ApiError({
    status: response.status,
    code: code ?? 'unknown_error',
    message: message ?? i18n.t('errors:generic'),
    fromServer: message !== null,
    field,
    retryAfter: response.status === 429 ? retryAfterSeconds(response) : undefined,
  });
}

export async function apiRequest<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const { method = 'GET', body, signal, anonymous = false, headers: extraHeaders, asBlob = false, onProgress } = options;
  const headers = new Headers({ Accept: asBlob ? '*/*' : 'application/json', 'Accept-Language': currentLanguage() });

  let requestBody: BodyInit | undefined;
  if (body instanceof FormData) {
    requestBody = body; // the browser sets the multipart boundary itself
  } else if (body !== undefined) {
    headers.set('Content-Type', 'application/json');
    requestBody = JSON.stringify(body);
  }
  for (const [name, value] of Object.entries(extraHeaders ?? {})) headers.set(name, value);
  headers.delete('Authorization');
  const token = anonymous ? null : getToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);

  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, {
      method,
      headers,
      body: requestBody,
      signal: signal ?? null,
      credentials: 'same-origin',
    });
  } catch (cause) {
    // An abort is the caller's own decision, not a failure to report.
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    const error = new ApiError({ status: 0, code: 'network_error', message: i18n.t('errors:networkError') });
    toast.negative(error.message, { timeout: ERROR_TOAST_TIMEOUT, position: 'top' });
    throw error;
  }

  if (response.ok && asBlob) return (onProgress ? await readBlob(response, onProgress) : await response.blob()) as T;
  const payload = parseJson(await response.text().catch(() => ''));
  if (response.ok) return payload as T;

  const error = errorFromResponse(response, payload);
  if (response.status >= 500) {
    toast.negative(error.message, { timeout: ERROR_TOAST_TIMEOUT, position: 'top' });
  } else if (endsSession(response.status, error.code) && !anonymous && !PATHS_WITHOUT_401_LOGOUT.includes(path.split('?')[0] ?? '')) {
    // Only the token this call sent is dead; a newer one (another tab's) is left alone.
    if (clearToken(token ?? undefined)) unauthorizedHandler?.(error);
  }
  throw error;
}

export const api = {
  get: <T>(path: string, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    apiRequest<T>(path, { ...options, method: 'GET' }),
  post: <T>(path: string, body?: unknown, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    apiRequest<T>(path, { ...options, method: 'POST', body }),
  put: <T>(path: string, body?: unknown, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    apiRequest<T>(path, { ...options, method: 'PUT', body }),
  patch: <T>(path: string, body?: unknown, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    apiRequest<T>(path, { ...options, method: 'PATCH', body }),
  delete: <T>(path: string, options?: Omit<RequestOptions, 'method' | 'body'>) =>
    apiRequest<T>(path, { ...options, method: 'DELETE' }),
};

/** A file the server answers, fetched with the session like any call; errors as above. */
export const apiBlob = (path: string) => apiRequest<Blob>(path, { method: 'GET', asBlob: true });

/**
 * The text to show inline for a failed call, or null when the client already showed a
 * toast for it (server and network errors). `fallback` replaces a missing server message,
 * e.g. "Invalid email or password" for a failed login.
 */
export function errorMessage(error: unknown, fallback?: string): string | null {
  if (isApiError(error)) {
    if (error.alreadyNotified) return null;
    if (!error.fromServer && fallback) return fallback;
    return error.message;
  }
  return fallback ?? i18n.t('errors:generic');
}
