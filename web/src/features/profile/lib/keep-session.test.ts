import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '@/features/auth';
import { i18n } from '@/lib/i18n';
import { clearToken, replaceToken, setToken } from '@/lib/token';
import { anna, jsonResponse } from '@/test/fixtures';
import { keepSessionAfterPasswordChange } from './keep-session';

const fetchMock = vi.fn<typeof fetch>();
const auth = () => useAuthStore.getState();

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  fetchMock.mockImplementation(() => Promise.resolve(jsonResponse(200, anna)));
  setToken('old', { remember: true });
  useAuthStore.setState({ status: 'authenticated', token: 'old', user: anna, settings: anna.settings });
  await i18n.changeLanguage('en-US');
});

describe('keepSessionAfterPasswordChange', () => {
  it('signs this tab in again when a sibling tab’s logout reached it after the fresh token was stored', async () => {
    const onRestored = vi.fn();
    auth().replaceToken('fresh');
    const stop = keepSessionAfterPasswordChange('fresh', onRestored);
    // The storage event of the sibling tab that cleared the old token.
    auth().syncFromOtherTab(null);
    await vi.waitFor(() => expect(auth().status).toBe('authenticated'));
    expect(auth().token).toBe('fresh');
    expect(onRestored).toHaveBeenCalledTimes(1);
    expect(new Headers(fetchMock.mock.calls[0]?.[1]?.headers).get('Authorization')).toBe('Bearer fresh');
    stop();
  });

  it('also when the logout came first and the fresh token only afterwards', async () => {
    auth().syncFromOtherTab(null);
    expect(auth().status).toBe('anonymous');
    replaceToken('fresh');
    auth().replaceToken('fresh');
    const stop = keepSessionAfterPasswordChange('fresh');
    await vi.waitFor(() => expect(auth().status).toBe('authenticated'));
    stop();
  });

  it('respects a real logout, which clears the stored token', async () => {
    auth().replaceToken('fresh');
    const stop = keepSessionAfterPasswordChange('fresh');
    clearToken();
    auth().syncFromOtherTab(null);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(auth().status).toBe('anonymous');
    expect(fetchMock).not.toHaveBeenCalled();
    stop();
  });

  it('watches only for a short while', () => {
    vi.useFakeTimers();
    try {
      auth().replaceToken('fresh');
      keepSessionAfterPasswordChange('fresh', undefined, 1000);
      vi.advanceTimersByTime(1001);
      auth().syncFromOtherTab(null);
      expect(auth().status).toBe('anonymous');
      expect(fetchMock).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });
});
