import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useToastStore } from '@/components/toast';
import { api, ApiError, errorMessage, setUnauthorizedHandler } from './api-client';
import { i18n } from './i18n';
import { getToken, setToken } from './token';

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

const fetchMock = vi.fn<typeof fetch>();

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  useToastStore.getState().clear();
  await i18n.changeLanguage('en-US');
});

afterEach(() => {
  setUnauthorizedHandler(null);
});

function lastRequest(): { url: string; init: RequestInit; headers: Headers } {
  const [url, init = {}] = fetchMock.mock.calls.at(-1)!;
  return { url: url as string, init, headers: new Headers(init.headers) };
}

async function caught(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('requests', () => {
  it('sends JSON to /api with the bearer token and the interface language', async () => {
    setToken('tok-1', { remember: false });
    await i18n.changeLanguage('hu-HU');
    fetchMock.mockResolvedValue(jsonResponse(200, { ok: true }));

    const result = await api.put<{ ok: boolean }>('/settings', { language: 'hu-HU' });

    expect(result).toEqual({ ok: true });
    const { url, init, headers } = lastRequest();
    expect(url).toBe('/api/settings');
    expect(init.method).toBe('PUT');
    expect(init.body).toBe('{"language":"hu-HU"}');
    expect(headers.get('Authorization')).toBe('Bearer tok-1');
    expect(headers.get('Content-Type')).toBe('application/json');
    expect(headers.get('Accept-Language')).toBe('hu-HU');
  });

  it('sends no token on anonymous calls', async () => {
    setToken('tok-1', { remember: false });
    fetchMock.mockResolvedValue(jsonResponse(200, { token: 'x' }));
    await api.post('/auth/forgot-password', { email: 'a@b.co' }, { anonymous: true });
    expect(lastRequest().headers.has('Authorization')).toBe(false);
  });

  it('adds the caller’s headers, but never lets them replace the token', async () => {
    setToken('tok-1', { remember: false });
    fetchMock.mockResolvedValue(jsonResponse(200, { ok: true }));
    await api.put('/subscription/change', { planId: 'p' }, { headers: { 'Idempotency-Key': 'k-1', Authorization: 'Bearer x' } });
    const { headers } = lastRequest();
    expect(headers.get('Idempotency-Key')).toBe('k-1');
    expect(headers.get('Content-Type')).toBe('application/json');
    expect(headers.get('Authorization')).toBe('Bearer tok-1');
  });

  it('passes FormData through without a JSON content type', async () => {
    fetchMock.mockResolvedValue(jsonResponse(200, { profileImage: '/uploads/a.jpg' }));
    const form = new FormData();
    form.append('image', new Blob(['x']), 'me.png');
    await api.post('/auth/profile/image', form);
    const { init, headers } = lastRequest();
    expect(init.body).toBe(form);
    expect(headers.has('Content-Type')).toBe(false);
  });
});

describe('401', () => {
  it('clears the stored token and calls the unauthorized handler', async () => {
    setToken('dead', { remember: true });
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    fetchMock.mockResolvedValue(
      jsonResponse(401, { success: false, code: 'unauthorized', message: 'Unauthorized action' }),
    );

    const error = await caught(api.get('/settings'));

    expect(error.status).toBe(401);
    expect(error.code).toBe('unauthorized');
    expect(getToken()).toBeNull();
    expect(localStorage.getItem('token')).toBeNull();
    expect(handler).toHaveBeenCalledOnce();
  });

  it('a 403 account_suspended ends the session too; another 403 does not', async () => {
    setToken('suspended', { remember: true });
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    fetchMock.mockResolvedValue(jsonResponse(403, { success: false, code: 'forbidden', message: 'No' }));
    expect((await caught(api.get('/admin/audit'))).code).toBe('forbidden');
    expect(getToken()).toBe('suspended');
    expect(handler).not.toHaveBeenCalled();

    fetchMock.mockResolvedValue(
      jsonResponse(403, { success: false, code: 'account_suspended', message: 'This account is suspended.' }),
    );
    const error = await caught(api.get('/settings'));
    expect(error.code).toBe('account_suspended');
    expect(getToken()).toBeNull();
    expect(handler).toHaveBeenCalledWith(error);
  });

  it('keeps a newer token another tab stored while the call was on its way', async () => {
    setToken('old', { remember: true });
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    fetchMock.mockImplementation(() => {
      setToken('newer', { remember: true });
      return Promise.resolve(jsonResponse(401, { success: false, code: 'unauthorized', message: 'x' }));
    });
    expect((await caught(api.get('/auth/profile'))).status).toBe(401);
    expect(getToken()).toBe('newer');
    expect(handler).not.toHaveBeenCalled();
  });

  it('leaves the session alone for /api/subscription', async () => {
    setToken('tok', { remember: true });
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    fetchMock.mockResolvedValue(jsonResponse(401, { success: false, code: 'unauthorized', message: 'x' }));

    await caught(api.get('/subscription'));

    expect(getToken()).toBe('tok');
    expect(handler).not.toHaveBeenCalled();
  });

  it('treats a 401 on an anonymous call (wrong password) as the call’s own answer', async () => {
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    fetchMock.mockResolvedValue(
      jsonResponse(401, { success: false, code: 'invalid_credentials', message: 'Invalid email or password' }),
    );
    const error = await caught(api.post('/auth/login', {}, { anonymous: true }));
    expect(error.message).toBe('Invalid email or password');
    expect(handler).not.toHaveBeenCalled();
  });
});

describe('server errors', () => {
  it('shows "Server error occurred" as a negative toast for 5000 ms at the top', async () => {
    fetchMock.mockResolvedValue(jsonResponse(500, { success: false, code: 'server_error', message: 'boom' }));

    const error = await caught(api.get('/usage/limits'));

    expect(error.status).toBe(500);
    expect(error.message).toBe('Server error occurred');
    expect(error.alreadyNotified).toBe(true);
    const toasts = useToastStore.getState().toasts;
    expect(toasts).toHaveLength(1);
    expect(toasts[0]).toMatchObject({
      type: 'negative',
      message: 'Server error occurred',
      timeout: 5000,
      position: 'top',
    });
  });

  it('toasts any status above 500 too, even without a JSON body', async () => {
    fetchMock.mockResolvedValue(new Response('Bad gateway', { status: 502 }));
    const error = await caught(api.get('/health'));
    expect(error.code).toBe('server_error');
    expect(useToastStore.getState().toasts[0]?.message).toBe('Server error occurred');
  });

  it('uses the interface language for the toast', async () => {
    await i18n.changeLanguage('hu-HU');
    fetchMock.mockResolvedValue(jsonResponse(503, { success: false, code: 'service_unavailable', message: 'x' }));
    await caught(api.get('/health'));
    expect(useToastStore.getState().toasts[0]?.message).toBe('Szerverhiba történt');
  });
});

describe('network failure', () => {
  it('rejects with "Network error occurred" and toasts it', async () => {
    fetchMock.mockRejectedValue(new TypeError('Failed to fetch'));

    const error = await caught(api.get('/auth/profile'));

    expect(error.status).toBe(0);
    expect(error.code).toBe('network_error');
    expect(error.message).toBe('Network error occurred');
    expect(useToastStore.getState().toasts[0]).toMatchObject({ type: 'negative', message: 'Network error occurred' });
  });

  it('lets an abort through untouched', async () => {
    fetchMock.mockRejectedValue(new DOMException('aborted', 'AbortError'));
    await expect(api.get('/plans')).rejects.toMatchObject({ name: 'AbortError' });
    expect(useToastStore.getState().toasts).toHaveLength(0);
  });
});

describe('other errors', () => {
  it('carries the server’s message, code, field and Retry-After', async () => {
    fetchMock.mockResolvedValue(
      jsonResponse(
        429,
        { success: false, code: 'rate_limited', message: 'Too many requests. Please try again later.' },
        { 'Retry-After': '7' },
      ),
    );
    const error = await caught(api.post('/auth/login', {}, { anonymous: true }));
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 7, fromServer: true });
    expect(error.message).toBe('Too many requests. Please try again later.');
    expect(useToastStore.getState().toasts).toHaveLength(0);
  });

  it('falls back to "An error occurred" when the server sends no message', async () => {
    fetchMock.mockResolvedValue(new Response('not json', { status: 400 }));
    const error = await caught(api.get('/settings'));
    expect(error.message).toBe('An error occurred');
    expect(error.code).toBe('unknown_error');
    expect(error.fromServer).toBe(false);
  });

  it('shows the server’s text of the code when the answer has none, in the interface language', async () => {
    fetchMock.mockResolvedValue(jsonResponse(409, { success: false, code: 'email_taken' }));
    const error = await caught(api.post('/auth/register/send-code', {}, { anonymous: true }));
    expect(error).toMatchObject({ code: 'email_taken', message: 'This email address is already registered', fromServer: true });
    await i18n.changeLanguage('hu-HU');
    fetchMock.mockResolvedValue(jsonResponse(409, { success: false, code: 'email_taken', message: ' ' }));
    expect((await caught(api.post('/auth/register/send-code', {}, { anonymous: true }))).message).toBe(
      'Ez az e-mail cím már regisztrálva van',
    );
  });

  it('falls back to the generic text when the code’s text needs what the answer does not say', async () => {
    fetchMock.mockResolvedValue(jsonResponse(400, { success: false, code: 'field_required', field: 'vatNumber' }));
    const error = await caught(api.put('/settings/billing-info', {}));
    expect(error).toMatchObject({ code: 'field_required', field: 'vatNumber', message: 'An error occurred', fromServer: false });
  });

  it('takes a code it does not know for unknown_error, keeping the server’s words', async () => {
    fetchMock.mockResolvedValue(jsonResponse(400, { success: false, code: 'brand_new', message: 'Something new' }));
    const error = await caught(api.get('/settings'));
    expect(error).toMatchObject({ code: 'unknown_error', message: 'Something new', fromServer: true });
  });

  it('keeps the field of a field error', async () => {
    fetchMock.mockResolvedValue(
      jsonResponse(400, { success: false, code: 'field_required', message: 'VAT number is required', field: 'vatNumber' }),
    );
    const error = await caught(api.put('/settings/billing-info', {}));
    expect(error.field).toBe('vatNumber');
  });
});

describe('errorMessage', () => {
  it('prefers the server message, then the caller’s fallback', () => {
    const fromServer = new ApiError({ status: 400, code: 'invalid_code', message: 'Invalid code', fromServer: true });
    const withoutMessage = new ApiError({ status: 401, code: 'unknown_error', message: 'An error occurred' });
    expect(errorMessage(fromServer, 'Invalid email or password')).toBe('Invalid code');
    expect(errorMessage(withoutMessage, 'Invalid email or password')).toBe('Invalid email or password');
  });

  it('is null for failures the client already toasted', () => {
    expect(errorMessage(new ApiError({ status: 500, code: 'server_error', message: 'x' }))).toBeNull();
    expect(errorMessage(new ApiError({ status: 0, code: 'network_error', message: 'x' }))).toBeNull();
  });
});
