import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { jsonResponse } from '@/test/fixtures';
import { useAdminUsersStore } from '../stores/admin-stores';
import { fakeServer } from '../testing/fake-server';
import { row, rows, USER_ID } from '../testing/fixtures';
import { UsersPage } from './users-page';

const fetchMock = vi.fn<typeof fetch>();
const userCalls = () =>
  fetchMock.mock.calls.map(([url]) => url as string).filter((url) => url.startsWith('/api/admin/users'));

function renderPage() {
  const router = createMemoryRouter(
    [
      { path: '/admin/users', element: <UsersPage /> },
      { path: '/admin/users/:id', element: <p>user page</p> },
    ],
    { initialEntries: ['/admin/users'] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  fetchMock.mockImplementation(
    fakeServer({
      'GET /api/admin/users': (url) =>
        jsonResponse(
          200,
          url.searchParams.get('cursor') === 'page2'
            ? { success: true, data: [row({ _id: 'z', email: 'zoe@example.com' })], nextCursor: null }
            : { success: true, data: rows, nextCursor: 'page2' },
        ),
    }),
  );
  useAdminUsersStore.getState().reset();
  await i18n.changeLanguage('en-US');
});

describe('UsersPage', () => {
  it('lists the users with their plan, its end and the usage', async () => {
    renderPage();
    const table = await screen.findByTestId('admin-users-table');
    const bela = within(table).getAllByTestId('admin-user-row')[0]!;
    expect(bela.getAttribute('data-email')).toBe('bela.nagy@example.com');
    expect(bela.textContent).toContain('Nagy Béla');
    const plan = bela.querySelector('td[data-label="Plan"]')!;
    expect(plan.textContent).toBe('Plusuntil Apr 14, 2025');
    expect(bela.textContent).toContain('12 resp. · 3 search · 1 img.');
    expect(bela.textContent).toContain('240 resp. · 31 search · 9 img.');
    expect(within(table).getAllByTestId('admin-user-row')[1]!.textContent).toContain('Suspended');
    expect(userCalls()).toEqual(['/api/admin/users']);
  });

  it('searches once typing pauses, by the prefix typed', async () => {
    renderPage();
    await screen.findByTestId('admin-users-table');
    const search = screen.getByRole('searchbox', { name: 'Search' });
    fireEvent.change(search, { target: { value: 'b' } });
    fireEvent.change(search, { target: { value: 'be' } });
    fireEvent.change(search, { target: { value: 'bel' } });
    await waitFor(() => expect(userCalls()).toEqual(['/api/admin/users', '/api/admin/users?q=bel']), { timeout: 2000 });
  });

  it('filters by plan and state at once, keeping the search', async () => {
    renderPage();
    await screen.findByTestId('admin-users-table');
    fireEvent.change(screen.getByRole('combobox', { name: 'Plan' }), { target: { value: 'pro' } });
    fireEvent.change(screen.getByRole('combobox', { name: 'Status' }), { target: { value: 'deleted' } });
    await waitFor(() =>
      expect(userCalls()).toEqual(['/api/admin/users', '/api/admin/users?plan=pro', '/api/admin/users?plan=pro&status=deleted']),
    );
    fireEvent.change(screen.getByRole('searchbox', { name: 'Search' }), { target: { value: 'x@' } });
    await waitFor(() => expect(userCalls().at(-1)).toBe('/api/admin/users?q=x%40&plan=pro&status=deleted'), { timeout: 2000 });
  });

  it('loads the next page after the last row, and says when nothing matches', async () => {
    renderPage();
    fireEvent.click(await screen.findByTestId('admin-users-more'));
    await waitFor(() => expect(screen.getAllByTestId('admin-user-row')).toHaveLength(rows.length + 1));
    expect(userCalls()[1]).toBe('/api/admin/users?cursor=page2');
    expect(screen.queryByTestId('admin-users-more')).toBeNull();
  });

  it('says when no user matches', async () => {
    fetchMock.mockImplementation(fakeServer({ 'GET /api/admin/users': { success: true, data: [], nextCursor: null } }));
    renderPage();
    expect((await screen.findByTestId('admin-users-empty')).textContent).toBe('No user matches these filters.');
  });

  it('opens a user from their row', async () => {
    const router = renderPage();
    const link = (await screen.findAllByTestId('admin-user-link'))[0]!;
    expect(link.getAttribute('href')).toBe(`/admin/users/${USER_ID}`);
    fireEvent.click(screen.getAllByTestId('admin-user-row')[0]!.querySelector('td:nth-child(2)')!);
    await waitFor(() => expect(router.state.location.pathname).toBe(`/admin/users/${USER_ID}`));
  });

  it('speaks Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    renderPage();
    await screen.findByTestId('admin-users-table');
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Felhasználók');
    expect(screen.getByRole('combobox', { name: 'Állapot' })).toBeDefined();
    expect(screen.getByTestId('admin-users-more').textContent).toBe('Továbbiak betöltése');
  });
});
