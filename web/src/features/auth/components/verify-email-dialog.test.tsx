import { fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { jsonResponse } from '@/test/fixtures';
import { initialAuthState, useAuthStore } from '../stores/auth-store';
import { VerifyEmailDialog } from './verify-email-dialog';

const fetchMock = vi.fn<typeof fetch>();

function renderDialog() {
  const router = createMemoryRouter(
    [{ path: '/', element: <VerifyEmailDialog email="anna@example.com" onClose={vi.fn()} /> }],
    { initialEntries: ['/'] },
  );
  render(<RouterProvider router={router} />);
}

const TEXTS = {
  'en-US': {
    code: 'Verification code',
    submit: 'Verify',
    resend: 'Resend code',
    required: 'Verification code is required',
    format: 'The verification code must be 6 digits',
  },
  'hu-HU': {
    code: 'Ellenőrző kód',
    submit: 'Megerősítés',
    resend: 'Kód újraküldése',
    required: 'Az ellenőrző kód megadása kötelező',
    format: 'Az ellenőrző kódnak 6 számjegyből kell állnia',
  },
} as const;

const INVALID_CODE = { success: false, code: 'invalid_code', message: 'Invalid code' };

beforeEach(() => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  useAuthStore.setState({ ...initialAuthState, registration: { token: 'reg-1', email: 'anna@example.com' } });
});

afterAll(async () => {
  await i18n.changeLanguage('en-US');
});

describe.each(['en-US', 'hu-HU'] as const)('VerifyEmailDialog (%s)', (language) => {
  const text = TEXTS[language];
  beforeEach(async () => {
    await i18n.changeLanguage(language);
  });

  it('says nothing about a required code before anything was tried', () => {
    renderDialog();
    const field = screen.getByLabelText(text.code);
    expect(screen.queryByText(text.required)).toBeNull();
    expect(field.getAttribute('aria-invalid')).toBeNull();
    // Focus in and out without typing is not an attempt either.
    fireEvent.focus(field);
    fireEvent.blur(field);
    expect(screen.queryByText(text.required)).toBeNull();
  });

  it('asks for the code after a submit attempt, and checks a typed code when the field is left', () => {
    renderDialog();
    fireEvent.click(screen.getByRole('button', { name: text.submit }));
    expect(screen.getByText(text.required)).toBeDefined();
    fireEvent.change(screen.getByLabelText(text.code), { target: { value: '12' } });
    expect(screen.getByText(text.format)).toBeDefined();
  });

  it('shows a wrong typed code when the field is left, before any submit', () => {
    renderDialog();
    const field = screen.getByLabelText(text.code);
    fireEvent.change(field, { target: { value: '123' } });
    expect(screen.queryByText(text.format)).toBeNull();
    fireEvent.blur(field);
    expect(screen.getByText(text.format)).toBeDefined();
  });

  it('clears the old "Invalid code" and the required message when a new code is sent', async () => {
    fetchMock.mockResolvedValueOnce(jsonResponse(400, INVALID_CODE));
    renderDialog();
    fireEvent.change(screen.getByLabelText(text.code), { target: { value: '111111' } });
    fireEvent.click(screen.getByRole('button', { name: text.submit }));
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid code');

    fetchMock.mockResolvedValueOnce(jsonResponse(200, { token: 'reg-2' }));
    fireEvent.click(screen.getByRole('button', { name: text.resend }));
    await vi.waitFor(() => expect(useAuthStore.getState().registration?.token).toBe('reg-2'));
    await vi.waitFor(() => expect(screen.queryByText('Invalid code')).toBeNull());
    expect(screen.queryByRole('alert')?.textContent ?? '').toBe('');
    const field = screen.getByLabelText<HTMLInputElement>(text.code);
    expect(field.value).toBe('');
    expect(screen.queryByText(text.required)).toBeNull();
    expect(field.getAttribute('aria-invalid')).toBeNull();
  });
});
