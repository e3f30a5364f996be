import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useProjectStore } from '@/features/projects';
import { useSubscriptionStore } from '@/features/subscription';
import { i18n } from '@/lib/i18n';
import { jsonResponse } from '@/test/fixtures';
import type { Plan } from '@/types/generated';
import { useChatStore } from '../stores/chat';
import { conversation, freePlan, plusPlan, project, PROJECT_ID, storedDocument, subscriptionOn } from '@/test/chat-fixtures';
import { ConversationSidebar } from './conversation-sidebar';

const fetchMock = vi.fn<typeof fetch>();
const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
const calls: { method: string; path: string; body: unknown }[] = [];

function renderSidebar(plan: Plan, projects = [project({ conversations: 1 })]) {
  useSubscriptionStore.setState({ subscription: subscriptionOn(plan), subscriptionStatus: 'ready' });
  useProjectStore.setState({ projects, status: 'ready' });
  const router = createMemoryRouter(
    [
      { path: '/chat', element: <ConversationSidebar activeId={null} /> },
      { path: '/chat/:id', element: <ConversationSidebar activeId={null} /> },
      { path: '/settings', element: <p>settings</p> },
    ],
    { initialEntries: ['/chat'] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
  calls.length = 0;
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset().mockImplementation((input, init) => {
    const path = urlOf(input).replace(/^\/api/, '');
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    calls.push({ method, path, body });
    if (method === 'POST' && path === '/projects') {
      return Promise.resolve(jsonResponse(201, { success: true, data: project({ ...(body as object), _id: 'p-new' }) }));
    }
    if (path.startsWith('/projects/')) {
      const id = path.split('/')[2]!;
      return Promise.resolve(jsonResponse(200, { success: true, data: { ...project({ _id: id, conversations: 1 }), files: [] } }));
    }
    if (method === 'PUT' && path.endsWith('/project')) {
      return Promise.resolve(
        jsonResponse(200, { success: true, data: conversation({ _id: 'c1', title: 'Roses', ...(body as object) }) }),
      );
    }
    if (path.startsWith('/conversations?')) {
      return Promise.resolve(jsonResponse(200, { success: true, data: [], nextCursor: null }));
    }
    return Promise.resolve(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
  });
  useChatStore.getState().reset();
  useSubscriptionStore.getState().reset();
  useProjectStore.getState().reset();
  useChatStore.setState({
    list: { items: [conversation({ _id: 'c1', title: 'Roses', projectId: null })], nextCursor: null },
    listStatus: 'ready',
  });
});

describe('the projects in the sidebar', () => {
  it('shows a free user without projects only a locked line, whose press says it is a premium feature', () => {
    renderSidebar(freePlan, []);
    const section = screen.getByTestId('project-section');
    expect(section.dataset.gate).toBe('premium');
    expect(within(section).queryByTestId('project-list')).toBeNull();
    // Nothing to move a conversation into: the row's menu has no such item.
    fireEvent.click(screen.getByRole('button', { name: 'Options for “Roses”' }));
    expect(screen.getByTestId('conversation-menu')).toBeDefined();
    expect(screen.queryByTestId('move-conversation')).toBeNull();
    fireEvent.keyDown(screen.getByTestId('conversation-menu'), { key: 'Escape' });
    fireEvent.click(within(section).getByRole('button', { name: 'New project' }));
    const notice = screen.getByTestId('chat-notice');
    expect(notice.textContent).toContain('Project management is a premium feature');
    expect(within(notice).getByRole('link', { name: 'Upgrade plan' }).getAttribute('href')).toBe('/settings#subscription');
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('shows nothing while the plan is not known', () => {
    useProjectStore.setState({ projects: [], status: 'ready' });
    const router = createMemoryRouter([{ path: '/chat', element: <ConversationSidebar activeId={null} /> }], {
      initialEntries: ['/chat'],
    });
    render(<RouterProvider router={router} />);
    expect(screen.queryByTestId('project-section')).toBeNull();
  });

  it('lists a downgraded user’s projects to read, empty and delete, but not to change or fill', async () => {
    const router = renderSidebar(freePlan);
    // Moving out of a project stays possible (the row menu's item).
    fireEvent.click(screen.getByRole('button', { name: 'Options for “Roses”' }));
    expect(screen.getAllByTestId('move-conversation')).toHaveLength(1);
    fireEvent.keyDown(screen.getByTestId('conversation-menu'), { key: 'Escape' });
    const item = screen.getByTestId('project-item');
    expect(item.textContent).toContain('Garden');
    expect(within(item).getByTestId('project-count').textContent).toBe('1');
    fireEvent.click(item);
    expect(item.getAttribute('aria-pressed')).toBe('true');
    const panel = await screen.findByTestId('project-panel');
    expect(within(panel).getByTestId('project-instructions').textContent).toBe('Answer as a gardener.\nKeep it short.');

    fireEvent.click(within(panel).getByTestId('project-edit'));
    expect(within(panel).getByTestId('chat-notice').textContent).toContain('Project management is a premium feature');
    expect(screen.queryByRole('dialog')).toBeNull();
    fireEvent.click(within(panel).getByTestId('chat-notice').querySelector('button')!);
    fireEvent.click(within(panel).getByTestId('project-add-document'));
    expect(within(panel).getByTestId('chat-notice').textContent).toContain('Project management is a premium feature');
    fireEvent.click(within(panel).getByTestId('chat-notice').querySelector('button')!);
    fireEvent.click(within(panel).getByTestId('new-chat-in-project'));
    expect(within(panel).getByTestId('chat-notice').textContent).toContain('Project management is a premium feature');
    expect(router.state.location.pathname + router.state.location.search).toBe('/chat');

    fireEvent.click(within(panel).getByTestId('project-delete'));
    const dialog = screen.getByRole('dialog', { name: 'Delete project?' });
    expect(within(dialog).getByRole<HTMLInputElement>('radio', { name: /Keep the conversations/ }).checked).toBe(true);
    expect(within(dialog).getByRole<HTMLInputElement>('radio', { name: /Delete its 1 conversation too/ }).checked).toBe(false);
  });

  it('creates a project after checking its name as the server would, and shows it chosen', async () => {
    renderSidebar(plusPlan, []);
    fireEvent.click(screen.getByRole('button', { name: 'New project' }));
    const dialog = screen.getByRole('dialog', { name: 'New project' });
    const name = within(dialog).getByLabelText('Name');
    fireEvent.click(within(dialog).getByTestId('project-save'));
    expect(within(dialog).getByText('Name is required')).toBeDefined();
    fireEvent.change(name, { target: { value: 'x'.repeat(101) } });
    expect(within(dialog).getByText('Name must be at most 100 characters')).toBeDefined();
    fireEvent.change(within(dialog).getByTestId('project-instructions-input'), { target: { value: 'y'.repeat(8001) } });
    expect(within(dialog).getByText('Instructions must be at most 8000 characters')).toBeDefined();
    expect(calls.filter((c) => c.method === 'POST')).toEqual([]);

    fireEvent.change(name, { target: { value: '  Garden  ' } });
    fireEvent.change(within(dialog).getByTestId('project-instructions-input'), { target: { value: 'Answer as a gardener.' } });
    await act(async () => {
      fireEvent.click(within(dialog).getByTestId('project-save'));
      await Promise.resolve();
    });
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ name: 'Garden', instructions: 'Answer as a gardener.' });
    const panel = await screen.findByTestId('project-panel');
    expect(panel.dataset.projectId).toBe('p-new');
    expect(screen.getByTestId('conversation-list-heading').textContent).toBe('Conversations in Garden');
  });

  it('shows the server’s words for a refused create', async () => {
    fetchMock.mockImplementation(() =>
      Promise.resolve(jsonResponse(400, { success: false, code: 'too_many_projects', message: 'You can have at most 100 projects' })),
    );
    renderSidebar(plusPlan, []);
    fireEvent.click(screen.getByRole('button', { name: 'New project' }));
    const dialog = screen.getByRole('dialog', { name: 'New project' });
    fireEvent.change(within(dialog).getByLabelText('Name'), { target: { value: 'One more' } });
    fireEvent.click(within(dialog).getByTestId('project-save'));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('You can have at most 100 projects');
  });

  it('moves a conversation into a project from its row', async () => {
    renderSidebar(plusPlan);
    fireEvent.click(screen.getByRole('button', { name: 'Options for “Roses”' }));
    fireEvent.click(screen.getByRole('menuitem', { name: 'Move to project' }));
    const dialog = screen.getByRole('dialog', { name: 'Move to project' });
    const options = within(dialog).getAllByTestId('move-option');
    expect(options.map((o) => o.textContent)).toEqual(['No projectCurrent', 'Garden1 conversation']);
    expect(options[0]!.getAttribute('aria-current')).toBe('true');
    await act(async () => {
      fireEvent.click(options[1]!);
      await Promise.resolve();
    });
    expect(calls.find((c) => c.method === 'PUT')).toEqual({ method: 'PUT', path: '/conversations/c1/project', body: { projectId: PROJECT_ID } });
    expect(useChatStore.getState().list.items[0]?.projectId).toBe(PROJECT_ID);
  });

  it('lists the chosen project’s documents with their reading progress', async () => {
    renderSidebar(plusPlan);
    fireEvent.click(screen.getByTestId('project-item'));
    await screen.findByTestId('project-panel');
    act(() =>
      useProjectStore.setState({
        files: { [PROJECT_ID]: [storedDocument({ _id: 'd1', name: 'notes.md', progress: 45 }), storedDocument({ _id: 'd2', status: 'ready', progress: 100, pages: 3 })] },
      }),
    );
    const documents = screen.getAllByTestId('project-document');
    expect(documents.map((d) => d.dataset.status)).toEqual(['processing', 'ready']);
    expect(within(documents[0]!).getByRole('progressbar').getAttribute('aria-valuenow')).toBe('45');
    expect(documents[1]!.textContent).toContain('3 pages');
    expect(screen.getByTestId('project-document-count').textContent).toBe('2 of 20');
  });

  it('speaks Hungarian too', async () => {
    await i18n.changeLanguage('hu-HU');
    renderSidebar(plusPlan, []);
    expect(screen.getByRole('heading', { name: 'Projektek' })).toBeDefined();
    fireEvent.click(screen.getByRole('button', { name: 'Új projekt' }));
    const dialog = screen.getByRole('dialog', { name: 'Új projekt' });
    fireEvent.change(within(dialog).getByLabelText('Név'), { target: { value: 'Kert\tház' } });
    fireEvent.click(within(dialog).getByTestId('project-save'));
    expect(within(dialog).getByText('A név egyetlen sor legyen, tabulátor nélkül')).toBeDefined();
  });
});
