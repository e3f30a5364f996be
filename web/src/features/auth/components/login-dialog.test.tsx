import { fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { anna, jsonResponse } from '@/test/fixtures';
import { useAuthDialogStore } from '../stores/auth-dialog-store';
import { initialAuthState, useAuthStore } from '../stores/auth-store';
import { LoginDialog } from './login-dialog';

const fetchMock = vi.fn<typeof fetch>();

function renderDialog(onClose = vi.fn()) {
  const router = createMemoryRouter(
    [
      { path: '/', element: <LoginDialog onClose={onClose} /> },
      { path: '/chat', element: <p>chat page</p> },
    ],
    { initialEntries: ['/'] },
  );
  render(<RouterProvider router={router} />);
  return { router, onClose };
}

const submit = () => fireEvent.click(screen.getByRole('button', { name: 'Log in' }));
const type = (label: string, value: string) => fireEvent.change(screen.getByLabelText(label), { target: { value } });

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  useAuthStore.setState(initialAuthState);
  await i18n.changeLanguage('en-US');
});

describe('LoginDialog', () => {
  it('shows the SPEC §5 texts instead of calling the server with an empty form', async () => {
    renderDialog();
    submit();
    expect(await screen.findByText('Email is required')).toBeDefined();
    expect(screen.getByText('Password is required')).toBeDefined();
    expect(screen.getByRole('alert').textContent).toBe('Please fill in all required fields correctly');
    expect(screen.getByLabelText('Email').getAttribute('aria-invalid')).toBe('true');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('rejects a malformed address', async () => {
    renderDialog();
    type('Email', 'anna@example');
    type('Password', 'x');
    submit();
    expect(await screen.findByText('Invalid email format')).toBeDefined();
  });

  it('falls back to "Invalid email or password" when the server gives no message', async () => {
    fetchMock.mockResolvedValue(new Response('', { status: 401 }));
    renderDialog();
    type('Email', 'anna@example.com');
    type('Password', 'wrong');
    submit();
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid email or password');
  });

  it('drops an earlier notice once a login is tried, so it never stands over the answer', async () => {
    fetchMock.mockResolvedValue(new Response('', { status: 401 }));
    useAuthDialogStore.getState().open('login', 'Your session has ended. Please log in again.');
    renderDialog();
    expect(screen.getByRole('status').textContent).toBe('Your session has ended. Please log in again.');
    type('Email', 'anna@example.com');
    type('Password', 'wrong');
    submit();
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid email or password');
    expect(screen.queryByText('Your session has ended. Please log in again.')).toBeNull();
    useAuthDialogStore.getState().close();
  });

  it('shows the server’s own message otherwise', async () => {
    fetchMock.mockResolvedValue(
      jsonResponse(429, { success: false, code: 'rate_limited', message: 'Too many requests. Please try again later.' }),
    );
    renderDialog();
    type('Email', 'anna@example.com');
    type('Password', 'secret');
    submit();
    expect((await screen.findByRole('alert')).textContent).toBe('Too many requests. Please try again later.');
  });

  it('signs in, closes and opens the chat', async () => {
    fetchMock.mockResolvedValue(jsonResponse(200, { ...anna, token: 'jwt' }));
    const { router, onClose } = renderDialog();
    type('Email', 'anna@example.com');
    type('Password', 'secret');
    fireEvent.click(screen.getByLabelText('Remember me'));
    submit();
    await vi.waitFor(() => expect(router.state.location.pathname).toBe('/chat'));
    expect(onClose).toHaveBeenCalled();
    expect(JSON.parse(fetchMock.mock.calls[0]?.[1]?.body as string)).toMatchObject({ rememberMe: true });
  });
});
