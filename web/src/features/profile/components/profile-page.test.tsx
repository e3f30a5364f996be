import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { startSocketRouter } from '@/app/socket-router';
import { useToastStore } from '@/components/toast';
import { useAuthDialogStore, useAuthStore } from '@/features/auth';
import { useSubscriptionStore } from '@/features/subscription';
import { i18n } from '@/lib/i18n';
import { chatSocket } from '@/lib/socket';
import { getToken, setToken } from '@/lib/token';
import { anna, jsonResponse } from '@/test/fixtures';
import type { Subscription, User } from '@/types/generated';
import { ProfilePage } from './profile-page';

const fetchMock = vi.fn<typeof fetch>();
const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
type Handler = (init: RequestInit | undefined) => Response;
let routes: Record<string, Handler>;

function answer(method: string, path: string, handler: Handler | Response) {
  routes[`${method} ${path}`] = typeof handler === 'function' ? handler : () => handler.clone();
}

function calls(method: string, path: string) {
  return fetchMock.mock.calls.filter(([url, init]) => url === `/api${path}` && (init?.method ?? 'GET') === method);
}

/** Frames the server would send; the socket's dispatch is private but plain at runtime. */
function serverFrame(type: string, payload: unknown) {
  act(() => (chatSocket as unknown as { dispatch(t: string, p: unknown): void }).dispatch(type, payload));
}

const user: User = { ...anna, settings: { ...anna.settings, language: 'en-US' } };

function renderPage() {
  const router = createMemoryRouter(
    [
      { path: '/', element: <h1>home</h1> },
      { path: '/profile', element: <ProfilePage /> },
    ],
    { initialEntries: ['/profile'] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

const type = (label: string | RegExp, value: string) =>
  fireEvent.change(screen.getByLabelText(label, { selector: 'input' }), { target: { value } });
const section = (name: string) => screen.getByRole('region', { name });

beforeEach(async () => {
  // The frames reach the auth store through the app's router (as at start-up).
  startSocketRouter();
  routes = {};
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  fetchMock.mockImplementation((input, init) => {
    const handler = routes[`${init?.method ?? 'GET'} ${urlOf(input).replace(/^\/api/, '')}`];
    return Promise.resolve(handler ? handler(init) : jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
  });
  setToken('old-token', { remember: true });
  useAuthStore.setState({ status: 'authenticated', token: 'old-token', user, settings: user.settings });
  useToastStore.getState().clear();
  await i18n.changeLanguage('en-US');
});

describe('name', () => {
  it('is required (SPEC §5), in both languages, and nothing is sent', async () => {
    renderPage();
    fireEvent.change(screen.getByTestId('profile-name-input'), { target: { value: '   ' } });
    fireEvent.click(screen.getByTestId('profile-save'));
    expect(await screen.findByText('Name is required')).toBeDefined();
    expect(screen.getByTestId('profile-name-input').getAttribute('aria-invalid')).toBe('true');

    await act(() => i18n.changeLanguage('hu-HU'));
    expect(await screen.findByText('A név megadása kötelező')).toBeDefined();
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('is saved trimmed, and the account shows the new name', async () => {
    answer('PUT', '/auth/profile', jsonResponse(200, { ...user, name: 'Anna K.' }));
    renderPage();
    fireEvent.change(screen.getByTestId('profile-name-input'), { target: { value: '  Anna K. ' } });
    fireEvent.click(screen.getByTestId('profile-save'));
    await vi.waitFor(() => expect(useAuthStore.getState().user?.name).toBe('Anna K.'));
    expect(JSON.parse(calls('PUT', '/auth/profile')[0]![1]!.body as string)).toEqual({ name: 'Anna K.' });
    expect(screen.getByTestId<HTMLInputElement>('profile-name-input').value).toBe('Anna K.');
  });

  it('shows the server’s message inline', async () => {
    answer(
      'PUT',
      '/auth/profile',
      jsonResponse(400, { success: false, code: 'validation_error', message: 'Please fill in all required fields correctly' }),
    );
    renderPage();
    fireEvent.change(screen.getByTestId('profile-name-input'), { target: { value: 'Anna\u0007' } });
    fireEvent.click(screen.getByTestId('profile-save'));
    expect((await within(section('Personal details')).findByRole('alert')).textContent).toBe(
      'Please fill in all required fields correctly',
    );
  });

  it('follows a rename made in another tab (profile.updated) until edited here', () => {
    renderPage();
    serverFrame('profile.updated', { user: { ...user, name: 'Annie', createdAt: undefined } });
    expect(screen.getByTestId<HTMLInputElement>('profile-name-input').value).toBe('Annie');
    expect(useAuthStore.getState().user?.name).toBe('Annie');

    fireEvent.change(screen.getByTestId('profile-name-input'), { target: { value: 'Mine' } });
    serverFrame('profile.updated', { user: { ...user, name: 'Other' } });
    expect(screen.getByTestId<HTMLInputElement>('profile-name-input').value).toBe('Mine');
  });
});

describe('password change', () => {
  const submit = () => fireEvent.click(screen.getByRole('button', { name: 'Change password' }));

  it('requires every field (SPEC §5)', async () => {
    renderPage();
    submit();
    const form = section('Change password');
    expect(await within(form).findByText('Current password is required')).toBeDefined();
    expect(within(form).getByText('New password is required')).toBeDefined();
    expect(within(form).getByText('Please confirm your new password')).toBeDefined();
    expect(within(form).getByRole('alert').textContent).toBe('Please fill in all required fields correctly');
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('wants at least 6 characters and a matching confirmation, in both languages', async () => {
    renderPage();
    type('Current password', 'old');
    type('New password', '12345');
    type('Confirm new password', '54321');
    submit();
    expect(await screen.findByText('Password must be at least 6 characters')).toBeDefined();
    expect(screen.getByText('Passwords do not match')).toBeDefined();

    await act(() => i18n.changeLanguage('hu-HU'));
    expect(await screen.findByText('A jelszónak legalább 6 karakter hosszúnak kell lennie')).toBeDefined();
    expect(screen.getByText('A jelszavak nem egyeznek')).toBeDefined();
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('stores the fresh token, with revocation deferred until it is stored', async () => {
    const defer = vi.spyOn(chatSocket, 'deferRevocation');
    answer('PUT', '/auth/password', jsonResponse(200, { success: true, token: 'fresh-token' }));
    renderPage();
    type('Current password', 'old-secret');
    type('New password', 'new-secret');
    type('Confirm new password', 'new-secret');
    submit();
    await vi.waitFor(() => expect(getToken()).toBe('fresh-token'));
    expect(defer).toHaveBeenCalledTimes(1);
    expect(useAuthStore.getState()).toMatchObject({ status: 'authenticated', token: 'fresh-token' });
    expect(JSON.parse(calls('PUT', '/auth/password')[0]![1]!.body as string)).toEqual({
      currentPassword: 'old-secret',
      newPassword: 'new-secret',
      confirmPassword: 'new-secret',
    });
    // The form is emptied for the next time.
    await vi.waitFor(() =>
      expect(screen.getByLabelText<HTMLInputElement>('Current password', { selector: 'input' }).value).toBe(''),
    );
  });

  it('puts a wrong current password next to its field', async () => {
    answer(
      'PUT',
      '/auth/password',
      jsonResponse(400, { success: false, code: 'wrong_password', message: 'Current password is incorrect' }),
    );
    renderPage();
    type('Current password', 'nope');
    type('New password', 'new-secret');
    type('Confirm new password', 'new-secret');
    submit();
    expect(await screen.findByText('Current password is incorrect')).toBeDefined();
    expect(screen.getByLabelText('Current password', { selector: 'input' }).getAttribute('aria-invalid')).toBe('true');
    expect(getToken()).toBe('old-token');
  });
});

describe('profile picture', () => {
  const choose = (file: File, testId = 'profile-image-input') =>
    fireEvent.change(screen.getByTestId(testId), { target: { files: [file] } });

  it('offers the gallery and the front camera, limited to JPEG, PNG and WebP', () => {
    renderPage();
    const gallery = screen.getByTestId('profile-image-input');
    const camera = screen.getByTestId('profile-camera-input');
    expect(gallery.getAttribute('accept')).toBe('image/jpeg,image/png,image/webp');
    expect(camera.getAttribute('accept')).toBe('image/jpeg,image/png,image/webp');
    expect(camera.getAttribute('capture')).toBe('user');
    expect(screen.getByRole('button', { name: 'Choose from gallery' })).toBeDefined();
  });

  it('refuses other types before uploading', async () => {
    renderPage();
    choose(new File(['gif'], 'a.gif', { type: 'image/gif' }));
    expect((await within(section('Profile picture')).findByRole('alert')).textContent).toBe(
      'Only JPEG, PNG and WebP images are accepted',
    );
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('uploads as multipart field "image" and shows the new picture', async () => {
    let resolve: (r: Response) => void = () => undefined;
    fetchMock.mockImplementationOnce(() => new Promise<Response>((r) => (resolve = r)));
    renderPage();
    choose(new File(['png'], 'me.png', { type: 'image/png' }));
    expect(await screen.findByText('Uploading picture…')).toBeDefined();
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/auth/profile/image');
    expect(init?.method).toBe('POST');
    expect((init?.body as FormData).get('image')).toBeInstanceOf(File);

    resolve(jsonResponse(200, { profileImage: '/uploads/avatars/new.jpg' }));
    const img = await screen.findByRole('img', { name: 'Profile picture of Anna Kovács' });
    expect(img.getAttribute('src')).toBe('/uploads/avatars/new.jpg');
    expect(useAuthStore.getState().user?.profileImage).toBe('/uploads/avatars/new.jpg');
  });

  it('shows the server’s refusal', async () => {
    answer(
      'POST',
      '/auth/profile/image',
      jsonResponse(415, {
        success: false,
        code: 'image_type_unsupported',
        message: 'Only JPEG, PNG and WebP images are accepted',
      }),
    );
    renderPage();
    choose(new File(['not really'], 'me.png', { type: '' }));
    expect((await within(section('Profile picture')).findByRole('alert')).textContent).toBe(
      'Only JPEG, PNG and WebP images are accepted',
    );
  });

  it('can be removed', async () => {
    useAuthStore.setState({ user: { ...user, profileImage: '/uploads/avatars/old.jpg' } });
    answer('DELETE', '/auth/profile/image', jsonResponse(200, { success: true, profileImage: null }));
    renderPage();
    fireEvent.click(screen.getByRole('button', { name: 'Remove picture' }));
    await vi.waitFor(() => expect(useAuthStore.getState().user?.profileImage).toBeNull());
    expect(screen.queryByRole('button', { name: 'Remove picture' })).toBeNull();
  });
});

describe('account deletion', () => {
  const openDeleteDialog = async (name = 'Delete your account?', button = 'Delete account') => {
    fireEvent.click(screen.getByRole('button', { name: button }));
    return screen.findByRole('dialog', { name });
  };
  const paid = (overrides: Partial<Subscription['data']> = {}): Subscription => ({
    data: {
      _id: 'sub-1',
      planType: 'plus',
      status: 'active',
      startDate: '2026-11-26T10:00:00.000+00:00',
      endDate: '2026-12-26T10:00:00.000+00:00',
      billingCycle: 'monthly',
      paymentMethod: 'credit_card',
      currency: 'EUR',
      autoRenew: true,
      cancelAtPeriodEnd: false,
      ...overrides,
    },
    subscriptionPlan: { name: 'Plus' } as Subscription['subscriptionPlan'],
    pendingSubscription: null,
    pendingSubscriptionPlan: null,
  });

  beforeEach(() => {
    useSubscriptionStore.setState({ subscription: null });
  });

  it('asks first, and cancelling deletes nothing', async () => {
    renderPage();
    const dialog = await openDeleteDialog();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('says what is deleted and what is kept', async () => {
    renderPage();
    const dialog = await openDeleteDialog();
    const text = dialog.textContent ?? '';
    for (const words of ['conversations and messages', 'files you uploaded', 'shared links', 'billing information']) {
      expect(text).toContain(words);
    }
    expect(text).toContain('Invoices and payment records are kept');
    expect(text).toContain('logged out on every device');
    // A free plan has nothing to say about renewals.
    expect(within(dialog).queryByTestId('delete-plan-notice')).toBeNull();
  });

  it('says that a renewing plan ends and does not renew', async () => {
    useSubscriptionStore.setState({ subscription: paid() });
    renderPage();
    const dialog = await openDeleteDialog();
    expect(within(dialog).getByTestId('delete-plan-notice').textContent).toBe(
      'Your Plus plan ends with your account and will not renew on December 26, 2026. The time left is not refunded.',
    );
  });

  it('says that a plan paid once ends with the account, in Hungarian too', async () => {
    useSubscriptionStore.setState({ subscription: paid({ billingCycle: 'one_time', autoRenew: false }) });
    await i18n.changeLanguage('hu-HU');
    renderPage();
    const dialog = await openDeleteDialog('Biztosan törli a fiókját?', 'Fiók törlése');
    expect(within(dialog).getByTestId('delete-plan-notice').textContent).toBe(
      'A(z) Plus csomagja (érvényesség vége: 2026. december 26.) a fiókjával együtt megszűnik. A hátralévő időt nem térítjük vissza.',
    );
  });

  it.each([
    ['en-US', 'Delete your account?', 'Delete account', 'Delete permanently', 'To confirm, type your email address: anna@example.com'],
    ['hu-HU', 'Biztosan törli a fiókját?', 'Fiók törlése', 'Végleges törlés', 'A megerősítéshez írja be az e-mail címét: anna@example.com'],
  ])('%s: deletes only once the own e-mail address is typed', async (language, title, open, confirm, label) => {
    await i18n.changeLanguage(language);
    renderPage();
    const dialog = await openDeleteDialog(title, open);
    const button = within(dialog).getByRole('button', { name: confirm });
    const field = within(dialog).getByLabelText(label);
    expect(button).toHaveProperty('disabled', true);
    for (const wrong of ['anna@example', 'someone@example.com', 'anna@example.com.', 'anna @example.com']) {
      fireEvent.change(field, { target: { value: wrong } });
      expect(button, wrong).toHaveProperty('disabled', true);
    }
    // Enter in the field does not get around the button.
    fireEvent.submit(field.closest('form')!);
    expect(fetchMock).not.toHaveBeenCalled();
    // Trimmed, and in any case.
    fireEvent.change(field, { target: { value: '  Anna@Example.COM ' } });
    expect(button).toHaveProperty('disabled', false);
  });

  it('deletes with the same call as before, logs out and goes to the start page, without a login dialog', async () => {
    answer('DELETE', '/auth/profile', jsonResponse(200, { success: true }));
    const router = renderPage();
    const dialog = await openDeleteDialog();
    fireEvent.change(within(dialog).getByTestId('delete-confirm-email'), { target: { value: 'anna@example.com' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete permanently' }));
    await vi.waitFor(() => expect(router.state.location.pathname).toBe('/'));
    expect(useAuthStore.getState().status).toBe('anonymous');
    expect(getToken()).toBeNull();
    const [call] = calls('DELETE', '/auth/profile');
    expect(calls('DELETE', '/auth/profile')).toHaveLength(1);
    expect(call?.[1]?.body).toBeUndefined();
    expect(useToastStore.getState().toasts.map((t) => t.message)).toEqual(['Your account has been deleted.']);
    expect(useAuthDialogStore.getState().dialog).toBeNull();

    // The server's revocation frame may come after the answer: no second notice, no login dialog.
    act(() => useAuthStore.getState().endSession('account_deleted'));
    expect(useToastStore.getState().toasts.map((t) => t.message)).toEqual(['Your account has been deleted.']);
    expect(useAuthDialogStore.getState().dialog).toBeNull();
  });
});
