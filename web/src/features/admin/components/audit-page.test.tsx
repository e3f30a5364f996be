import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { jsonResponse } from '@/test/fixtures';
import { useAuditStore } from '../stores/admin-stores';
import { fakeServer } from '../testing/fake-server';
import { auditEntries, auditEntry, USER_ID } from '../testing/fixtures';
import { AuditPage } from './audit-page';

const fetchMock = vi.fn<typeof fetch>();
const auditCalls = () => fetchMock.mock.calls.map(([url]) => url as string).filter((url) => url.startsWith('/api/admin/audit'));

function renderAt(path: string) {
  const router = createMemoryRouter([{ path: '/admin/audit', element: <AuditPage /> }], { initialEntries: [path] });
  render(<RouterProvider router={router} />);
  return router;
}

beforeEach(async () => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  fetchMock.mockImplementation(
    fakeServer({
      'GET /api/admin/audit': (url) =>
        jsonResponse(
          200,
          url.searchParams.get('cursor')
            ? { success: true, data: [{ ...auditEntry, _id: 'older', action: 'usage.reset' }], nextCursor: null }
            : { success: true, data: auditEntries, nextCursor: 'c2' },
        ),
    }),
  );
  useAuditStore.getState().reset();
  await i18n.changeLanguage('en-US');
});

describe('AuditPage', () => {
  it('lists the actions newest first, in words, with the change before and after', async () => {
    renderAt('/admin/audit');
    const rows = await screen.findAllByTestId('admin-audit-row');
    expect(rows.map((row) => row.getAttribute('data-action'))).toEqual(['payment.refunded', 'plan.changed', 'admin.granted']);
    expect(rows[0]!.textContent).toContain('admin@example.com');
    expect(rows[0]!.textContent).toContain('Refunded a payment');
    expect(rows[0]!.textContent).toContain('Double charge reported by e-mail');
    expect(rows[0]!.textContent).toContain('Refunded: 0 →changed to 5');
    expect(rows[1]!.textContent).toContain('Plan: Base →changed to Plus');
    expect(rows[2]!.textContent).toContain('Role: User →changed to Admin');
    expect(within(rows[0]!).getByRole('link', { name: 'bela.nagy@example.com' }).getAttribute('href')).toBe(`/admin/users/${USER_ID}`);
    // The command line is a marker, shown in the admin's language.
    expect(rows[2]!.textContent).toContain('Command line');
    expect(auditCalls()).toEqual(['/api/admin/audit']);
  });

  it('keeps to one user from the user page’s link, and pages', async () => {
    renderAt(`/admin/audit?userId=${USER_ID}`);
    expect((await screen.findByTestId('admin-audit-filter')).textContent).toContain('Only actions on bela.nagy@example.com.');
    fireEvent.click(screen.getByTestId('admin-audit-more'));
    await waitFor(() => expect(screen.getAllByTestId('admin-audit-row')).toHaveLength(auditEntries.length + 1));
    expect(auditCalls()).toEqual([`/api/admin/audit?userId=${USER_ID}`, `/api/admin/audit?userId=${USER_ID}&cursor=c2`]);
    expect(screen.getAllByTestId('admin-audit-row').at(-1)!.textContent).toContain('Reset today’s usage');
    expect(screen.queryByTestId('admin-audit-more')).toBeNull();
  });

  it('shows everything again when the filter is cleared', async () => {
    const router = renderAt(`/admin/audit?userId=${USER_ID}`);
    fireEvent.click(await screen.findByTestId('admin-audit-clear'));
    await waitFor(() => expect(auditCalls().at(-1)).toBe('/api/admin/audit'));
    expect(router.state.location.search).toBe('');
  });

  it('speaks Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    renderAt('/admin/audit');
    const rows = await screen.findAllByTestId('admin-audit-row');
    expect(rows[1]!.textContent).toContain('Csomagot módosított');
    expect(rows[2]!.textContent).toContain('Parancssor');
  });
});
