import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chatSocket } from '@/lib/socket';
import { jsonResponse } from '@/test/fixtures';
import { conversation, project, PROJECT_ID, storedDocument, userMessage } from '@/test/chat-fixtures';
import { newChatKey, useChatStore } from '@/features/chat';
import { compareProjects, removeProject, replaceProjects, upsertProject } from '../project-list';
import { useProjectStore } from '.';

const fetchMock = vi.fn<typeof fetch>();
const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
const store = () => useProjectStore.getState();
const chat = () => useChatStore.getState();
const OTHER = '01a20aea-0000-7000-8000-000000000002';

type Handler = (method: string, path: string, body: unknown) => Response | undefined;
let handler: Handler = () => undefined;
const calls: { method: string; path: string; body: unknown }[] = [];

function bodyOf(init: RequestInit | undefined): unknown {
  if (typeof init?.body === 'string') return JSON.parse(init.body) as unknown;
  return init?.body;
}

function route(next: Handler) {
  handler = next;
}

const ok = (data: unknown, extra: Record<string, unknown> = {}) => jsonResponse(200, { success: true, data, ...extra });
const page = (items: unknown[], nextCursor: string | null = null) => jsonResponse(200, { success: true, data: items, nextCursor });
const refused = (status: number, code: string, message: string) => jsonResponse(status, { success: false, code, message });

/** Lets the promises queued by a store action settle. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(() => {
  vi.stubGlobal('fetch', fetchMock);
  calls.length = 0;
  route(() => undefined);
  fetchMock.mockReset().mockImplementation((input, init) => {
    const path = urlOf(input).replace(/^\/api/, '');
    const method = init?.method ?? 'GET';
    const body = bodyOf(init);
    calls.push({ method, path, body });
    return Promise.resolve(handler(method, path, body) ?? refused(404, 'not_found', 'Not found'));
  });
  vi.spyOn(chatSocket, 'emit').mockReturnValue(true);
  store().reset();
  chat().reset();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the project list', () => {
  const older = project({ _id: 'a', updatedAt: '2025-03-14T10:00:00.000+00:00' });
  const newer = project({ _id: 'b', updatedAt: '2025-03-14T11:00:00.000+00:00' });

  it('puts the most recently changed first, the larger id first on a tie', () => {
    expect([older, newer].sort(compareProjects).map((p) => p._id)).toEqual(['b', 'a']);
    const twin = project({ _id: 'c', updatedAt: older.updatedAt });
    expect([older, twin].sort(compareProjects).map((p) => p._id)).toEqual(['c', 'a']);
  });

  it('replaces a changed project and moves it to where it now belongs', () => {
    const list = upsertProject([newer, older], { ...older, name: 'Renamed', updatedAt: '2025-03-14T12:00:00.000+00:00' });
    expect(list.map((p) => [p._id, p.name])).toEqual([
      ['a', 'Renamed'],
      ['b', 'Garden'],
    ]);
    expect(removeProject(list, 'a').map((p) => p._id)).toEqual(['b']);
  });

  it('keeps what frames said while a fresh list was fetched', () => {
    const created = project({ _id: 'c', updatedAt: '2025-03-14T13:00:00.000+00:00' });
    const counted = { ...older, conversations: 4 };
    const fetched = [newer, older];
    const list = replaceProjects([created, counted], fetched, new Set(['c', 'a']), new Set(['b']));
    expect(list.map((p) => [p._id, p.conversations])).toEqual([
      ['c', 0],
      ['a', 4],
    ]);
  });
});

describe('loading and choosing a project', () => {
  it('lists the projects and, once one is chosen, its conversations and documents', async () => {
    const doc = storedDocument({ _id: 'd1', status: 'ready', progress: 100 });
    route((_method, path) => {
      if (path === '/projects') return ok([project({ conversations: 1 })]);
      if (path === `/projects/${PROJECT_ID}`) return ok({ ...project({ conversations: 1 }), files: [doc] });
      if (path.startsWith('/conversations?')) return page([conversation({ _id: 'c1', projectId: PROJECT_ID })]);
      return undefined;
    });
    await store().loadProjects();
    expect(store().projects.map((p) => p.name)).toEqual(['Garden']);
    expect(store().status).toBe('ready');

    store().select(PROJECT_ID);
    expect(store().listStatus).toBe('loading');
    await settle();
    const listCall = calls.find((c) => c.path.startsWith('/conversations?'))!;
    expect(new URLSearchParams(listCall.path.split('?')[1]).get('projectId')).toBe(PROJECT_ID);
    expect(store().list.items.map((c) => c._id)).toEqual(['c1']);
    expect(store().files[PROJECT_ID]?.map((f) => f._id)).toEqual(['d1']);

    store().select(null);
    expect(store().list.items).toEqual([]);
    expect(store().listStatus).toBe('idle');
  });

  it('forgets a chosen project the server no longer has', async () => {
    route((_method, path) => (path === '/projects' ? ok([]) : path.startsWith('/conversations?') ? page([]) : undefined));
    useProjectStore.setState({ projects: [project()], status: 'ready' });
    store().select(PROJECT_ID);
    await store().loadProjects();
    expect(store().selectedId).toBeNull();
  });
});

describe('frames', () => {
  beforeEach(async () => {
    route((_method, path) => {
      if (path === '/projects') return ok([project({ conversations: 1 }), project({ _id: OTHER, name: 'Taxes', updatedAt: '2025-03-14T09:00:00.000+00:00' })]);
      if (path === `/projects/${PROJECT_ID}`) return ok({ ...project({ conversations: 1 }), files: [] });
      if (path.startsWith('/conversations?')) return page([conversation({ _id: 'c1', projectId: PROJECT_ID })]);
      return undefined;
    });
    await store().loadProjects();
    store().select(PROJECT_ID);
    await settle();
  });

  it('project.updated adds a project made in another tab, and re-sorts a changed one', () => {
    const made = project({ _id: 'n1', name: 'Recipes', updatedAt: '2025-03-15T00:00:00.000+00:00' });
    store().onProjectUpdated({ project: made });
    expect(store().projects.map((p) => p.name)).toEqual(['Recipes', 'Garden', 'Taxes']);
    store().onProjectUpdated({ project: project({ _id: OTHER, name: 'Taxes 2025', updatedAt: '2025-03-16T00:00:00.000+00:00' }) });
    expect(store().projects.map((p) => p.name)).toEqual(['Taxes 2025', 'Recipes', 'Garden']);
  });

  it('project.updated of the chosen project reads its documents again (the frame carries none)', async () => {
    calls.length = 0;
    store().onProjectUpdated({ project: project({ conversations: 2 }) });
    expect(store().projects.find((p) => p._id === PROJECT_ID)?.conversations).toBe(2);
    await settle();
    expect(calls.map((c) => c.path)).toContain(`/projects/${PROJECT_ID}`);
  });

  it('project.deleted removes it, shows all conversations again, and no late frame brings it back', () => {
    store().onProjectDeleted({ projectId: PROJECT_ID });
    expect(store().projects.map((p) => p._id)).toEqual([OTHER]);
    expect(store().selectedId).toBeNull();
    expect(store().list.items).toEqual([]);
    store().onProjectUpdated({ project: project() });
    expect(store().projects.map((p) => p._id)).toEqual([OTHER]);
  });

  it('a conversation moved out leaves the project’s list, one moved in joins it', () => {
    const moved = conversation({ _id: 'c1', projectId: null });
    store().onConversationUpdated({ conversation: moved });
    expect(store().list.items).toEqual([]);
    store().onConversationUpdated({ conversation: { ...moved, projectId: PROJECT_ID } });
    expect(store().list.items.map((c) => c._id)).toEqual(['c1']);
    // Into another project: it leaves this one's list.
    store().onConversationUpdated({ conversation: { ...moved, projectId: OTHER } });
    expect(store().list.items).toEqual([]);
  });

  it('a rename in the project changes the row in place', () => {
    store().onConversationUpdated({ conversation: conversation({ _id: 'c1', projectId: PROJECT_ID, title: 'Roses' }) });
    expect(store().list.items.map((c) => c.title)).toEqual(['Roses']);
  });

  it('a conversation started in the project joins its list; the count comes with project.updated, unasked', async () => {
    vi.useFakeTimers();
    calls.length = 0;
    const started = conversation({ _id: 'c2', projectId: PROJECT_ID, updatedAt: '2025-03-15T00:00:00.000+00:00' });
    store().onConversationCreated({ clientId: 'x', conversation: started });
    // One elsewhere is not listed here.
    store().onConversationCreated({ clientId: 'y', conversation: conversation({ _id: 'c3', projectId: OTHER }) });
    expect(store().list.items.map((c) => c._id)).toEqual(['c2', 'c1']);
    store().onProjectUpdated({ project: project({ _id: OTHER, name: 'Taxes', conversations: 1 }) });
    expect(store().projects.find((p) => p._id === OTHER)?.conversations).toBe(1);
    await vi.advanceTimersByTimeAsync(2000);
    // Neither the list of projects nor the other project's documents are read for it.
    expect(calls).toEqual([]);
  });

  it('a deleted conversation leaves the list, and nothing is read for it', async () => {
    vi.useFakeTimers();
    calls.length = 0;
    store().onConversationDeleted({ conversationId: 'c1' });
    expect(store().list.items).toEqual([]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(calls).toEqual([]);
  });

  it('a new message moves its conversation to the top of the project’s list', () => {
    store().onConversationCreated({
      clientId: 'x',
      conversation: conversation({ _id: 'c2', projectId: PROJECT_ID, updatedAt: '2025-03-15T00:00:00.000+00:00' }),
    });
    expect(store().list.items.map((c) => c._id)).toEqual(['c2', 'c1']);
    store().onMessageCreated({
      conversationId: 'c1',
      clientId: null,
      message: userMessage({ conversationId: 'c1', createdAt: '2025-03-16T00:00:00.000+00:00' }),
    });
    expect(store().list.items.map((c) => c._id)).toEqual(['c1', 'c2']);
  });

  it('a page of the project fetched while a conversation moved out does not bring it back', async () => {
    let answer: (response: Response) => void = () => undefined;
    fetchMock.mockImplementationOnce(() => new Promise<Response>((resolve) => (answer = resolve)));
    const loading = store().loadConversations();
    store().onConversationUpdated({ conversation: conversation({ _id: 'c1', projectId: null }) });
    answer(page([conversation({ _id: 'c1', projectId: PROJECT_ID })]));
    await loading;
    expect(store().list.items).toEqual([]);
  });
});

describe('moving a conversation', () => {
  it('PUTs its project and shows the move in both lists at once', async () => {
    const c1 = conversation({ _id: 'c1', projectId: null, title: 'Roses' });
    useChatStore.setState({ list: { items: [c1], nextCursor: null }, listStatus: 'ready' });
    useProjectStore.setState({ projects: [project()], status: 'ready', selectedId: PROJECT_ID, listStatus: 'ready' });
    route((method, path, body) =>
      method === 'PUT' && path === '/conversations/c1/project'
        ? ok({ ...c1, projectId: (body as { projectId: string | null }).projectId })
        : undefined,
    );
    await store().move('c1', PROJECT_ID);
    expect(calls.at(-1)).toEqual({ method: 'PUT', path: '/conversations/c1/project', body: { projectId: PROJECT_ID } });
    expect(store().list.items.map((c) => c._id)).toEqual(['c1']);
    expect(chat().list.items[0]?.projectId).toBe(PROJECT_ID);

    await store().move('c1', null);
    expect(calls.at(-1)?.body).toEqual({ projectId: null });
    expect(store().list.items).toEqual([]);
    expect(chat().list.items[0]?.projectId).toBeNull();
  });

  it('a refused move changes nothing and rejects with the server’s words', async () => {
    const c1 = conversation({ _id: 'c1', projectId: null });
    useChatStore.setState({ list: { items: [c1], nextCursor: null }, listStatus: 'ready' });
    route(() => refused(403, 'premium_required', 'Project management is a premium feature'));
    await expect(store().move('c1', PROJECT_ID)).rejects.toMatchObject({
      code: 'premium_required',
      message: 'Project management is a premium feature',
    });
    expect(chat().list.items[0]?.projectId).toBeNull();
  });
});

describe('creating, changing and deleting', () => {
  it('a created project is listed before its frame', async () => {
    route((method, path, body) =>
      method === 'POST' && path === '/projects' ? jsonResponse(201, { success: true, data: project(body as object) }) : undefined,
    );
    await store().create({ name: 'Garden', instructions: '' });
    // Empty instructions are left out.
    expect(calls[0]?.body).toEqual({ name: 'Garden' });
    expect(store().projects.map((p) => p.name)).toEqual(['Garden']);
  });

  it('PATCHes what changed', async () => {
    useProjectStore.setState({ projects: [project()], status: 'ready' });
    route((method, _path, body) => (method === 'PATCH' ? ok(project({ ...(body as object), updatedAt: '2025-03-15T00:00:00.000+00:00' })) : undefined));
    await store().update(PROJECT_ID, { instructions: 'Answer in verse.' });
    expect(calls[0]).toEqual({ method: 'PATCH', path: `/projects/${PROJECT_ID}`, body: { instructions: 'Answer in verse.' } });
    expect(store().projects[0]?.instructions).toBe('Answer in verse.');
  });

  it('deleting with the conversations asks for it, and marks them deleted by this tab', async () => {
    useProjectStore.setState({ projects: [project({ conversations: 1 })], status: 'ready' });
    useChatStore.setState({
      list: { items: [conversation({ _id: 'c1', projectId: PROJECT_ID }), conversation({ _id: 'c2', projectId: null })], nextCursor: null },
      listStatus: 'ready',
    });
    route((method) => (method === 'DELETE' ? ok(undefined) : undefined));
    await store().remove(PROJECT_ID, true);
    expect(calls[0]).toMatchObject({ method: 'DELETE', path: `/projects/${PROJECT_ID}?deleteConversations=true` });
    expect(chat().deletedHere).toEqual({ c1: true });
    expect(store().projects).toEqual([]);
    expect(store().deletedHere[PROJECT_ID]).toBe(true);
  });

  it('deleting and keeping the conversations asks for no more', async () => {
    useProjectStore.setState({ projects: [project({ conversations: 1 })], status: 'ready' });
    route((method) => (method === 'DELETE' ? ok(undefined) : undefined));
    await store().remove(PROJECT_ID, false);
    expect(calls[0]?.path).toBe(`/projects/${PROJECT_ID}`);
  });
});

describe('project documents', () => {
  const note = () => new File(['The secret is 42.'], 'notes.md', { type: 'text/markdown' });

  beforeEach(() => {
    useProjectStore.setState({ projects: [project()], status: 'ready', files: { [PROJECT_ID]: [] } });
  });

  it('uploads a document, adds it to the project, and follows its reading', async () => {
    const uploaded = storedDocument({ _id: 'd1', name: 'notes.md', progress: 0 });
    route((method, path) => {
      if (method === 'POST' && path === '/files') return jsonResponse(201, { success: true, data: uploaded });
      if (method === 'POST' && path === `/projects/${PROJECT_ID}/files`) return ok({ ...project(), files: [uploaded] });
      return undefined;
    });
    store().addDocuments(PROJECT_ID, [note()], 20);
    expect(store().uploads[PROJECT_ID]?.map((u) => u.status)).toEqual(['uploading']);
    // A frame may come before the upload's answer: the further copy wins.
    store().onFileUpdated({ ...uploaded, progress: 40 });
    await vi.waitFor(() => expect(store().files[PROJECT_ID]?.map((f) => f._id)).toEqual(['d1']));
    expect(calls.find((c) => c.path === `/projects/${PROJECT_ID}/files`)?.body).toEqual({ fileId: 'd1' });
    expect(store().uploads[PROJECT_ID]).toBeUndefined();
    expect(store().files[PROJECT_ID]?.[0]?.progress).toBe(40);

    store().onFileUpdated({ ...uploaded, progress: 80 });
    expect(store().files[PROJECT_ID]?.[0]?.progress).toBe(80);
    store().onFileUpdated({ ...uploaded, status: 'ready', progress: 100 });
    expect(store().files[PROJECT_ID]?.[0]?.status).toBe('ready');
    // A late progress after the end changes nothing.
    store().onFileUpdated({ ...uploaded, progress: 90 });
    expect(store().files[PROJECT_ID]?.[0]?.status).toBe('ready');
  });

  it('a list of the project read before the document’s end does not take it back to being read', async () => {
    const reading = storedDocument({ _id: 'd1', progress: 40 });
    useProjectStore.setState({ selectedId: PROJECT_ID, files: { [PROJECT_ID]: [reading] }, filesStatus: { [PROJECT_ID]: 'ready' } });
    let answer: (r: Response) => void = () => undefined;
    fetchMock.mockImplementation(() => new Promise<Response>((resolve) => (answer = resolve)));
    const load = store().loadFiles(PROJECT_ID);
    store().onFileUpdated({ ...reading, status: 'ready', progress: 100 });
    answer(ok({ ...project(), files: [reading] }));
    await load;
    expect(store().files[PROJECT_ID]?.map((f) => [f._id, f.status])).toEqual([['d1', 'ready']]);
  });

  it('a list of the project asked for before an upload, answered after it, does not hide the new document', async () => {
    const uploaded = storedDocument({ _id: 'd2', name: 'notes.md' });
    let answerList: (r: Response) => void = () => undefined;
    fetchMock.mockImplementation((input, init) => {
      const path = urlOf(input).replace(/^\/api/, '');
      const method = init?.method ?? 'GET';
      if (method === 'GET' && path === `/projects/${PROJECT_ID}`) return new Promise<Response>((resolve) => (answerList = resolve));
      if (method === 'POST' && path === '/files') return Promise.resolve(jsonResponse(201, { success: true, data: uploaded }));
      if (method === 'POST' && path === `/projects/${PROJECT_ID}/files`) return Promise.resolve(ok({ ...project(), files: [uploaded] }));
      return Promise.resolve(refused(404, 'not_found', 'Not found'));
    });
    const load = store().loadFiles(PROJECT_ID);
    store().addDocuments(PROJECT_ID, [note()], 20);
    await vi.waitFor(() => expect(store().files[PROJECT_ID]?.map((f) => f._id)).toEqual(['d2']));
    answerList(ok({ ...project(), files: [] }));
    await load;
    expect(store().files[PROJECT_ID]?.map((f) => f._id)).toEqual(['d2']);
  });

  it('shows the server’s words when the project is full, and deletes the upload it could not add', async () => {
    const uploaded = storedDocument({ _id: 'd21', name: 'notes.md' });
    route((method, path) => {
      if (method === 'POST' && path === '/files') return jsonResponse(201, { success: true, data: uploaded });
      if (method === 'POST' && path === `/projects/${PROJECT_ID}/files`) {
        return refused(400, 'too_many_project_files', 'A project can hold at most 20 files');
      }
      if (method === 'DELETE') return ok(undefined);
      return undefined;
    });
    store().addDocuments(PROJECT_ID, [note()], 20);
    await vi.waitFor(() => expect(store().uploads[PROJECT_ID]?.[0]?.status).toBe('error'));
    expect(store().uploads[PROJECT_ID]?.[0]?.error).toEqual({ kind: 'server', message: 'A project can hold at most 20 files' });
    await vi.waitFor(() => expect(calls.some((c) => c.method === 'DELETE' && c.path === '/files/d21')).toBe(true));
    store().dismissUpload(PROJECT_ID, store().uploads[PROJECT_ID]![0]!.localId);
    expect(store().uploads[PROJECT_ID]).toBeUndefined();
  });

  it('refuses before uploading what is no document, or too large', () => {
    const image = new File([new Uint8Array(8)], 'cat.png', { type: 'image/png' });
    const big = new File([new Uint8Array(2 * 1024 * 1024)], 'big.pdf', { type: 'application/pdf' });
    store().addDocuments(PROJECT_ID, [image, big], 1);
    expect(store().uploads[PROJECT_ID]?.map((u) => u.error)).toEqual([{ kind: 'unsupported' }, { kind: 'tooLarge', max: 1 }]);
    expect(calls).toEqual([]);
  });

  it('uploads one document after another', async () => {
    let uploads = 0;
    const pending: ((r: Response) => void)[] = [];
    fetchMock.mockImplementation((input, init) => {
      const path = urlOf(input).replace(/^\/api/, '');
      calls.push({ method: init?.method ?? 'GET', path, body: bodyOf(init) });
      if (path === '/files') {
        uploads += 1;
        return new Promise<Response>((resolve) => pending.push(resolve));
      }
      return Promise.resolve(ok({ ...project(), files: [] }));
    });
    store().addDocuments(PROJECT_ID, [note(), new File(['b'], 'b.txt', { type: 'text/plain' })], 20);
    await settle();
    expect(uploads).toBe(1);
    pending[0]!(jsonResponse(201, { success: true, data: storedDocument({ _id: 'd1' }) }));
    await vi.waitFor(() => expect(uploads).toBe(2));
  });

  it('removes a document with DELETE /api/files/{id}', async () => {
    useProjectStore.setState({ files: { [PROJECT_ID]: [storedDocument({ _id: 'd1' }), storedDocument({ _id: 'd2' })] } });
    route((method) => (method === 'DELETE' ? ok(undefined) : undefined));
    await store().removeFile(PROJECT_ID, 'd1');
    expect(calls[0]).toMatchObject({ method: 'DELETE', path: '/files/d1' });
    expect(store().files[PROJECT_ID]?.map((f) => f._id)).toEqual(['d2']);
  });

  it('shows a document deleted in another tab gone once its project.updated comes', async () => {
    useProjectStore.setState({
      projects: [project()],
      status: 'ready',
      selectedId: PROJECT_ID,
      files: { [PROJECT_ID]: [storedDocument({ _id: 'd1' }), storedDocument({ _id: 'd2' })] },
      filesStatus: { [PROJECT_ID]: 'ready' },
    });
    route((_method, path) => (path === `/projects/${PROJECT_ID}` ? ok({ ...project(), files: [storedDocument({ _id: 'd2' })] }) : undefined));
    store().onProjectUpdated({ project: project() });
    await settle();
    expect(calls).toEqual([expect.objectContaining({ method: 'GET', path: `/projects/${PROJECT_ID}` })]);
    expect(store().files[PROJECT_ID]?.map((f) => f._id)).toEqual(['d2']);
  });

  it('keeps a document whose deletion was refused', async () => {
    useProjectStore.setState({ files: { [PROJECT_ID]: [storedDocument({ _id: 'd1' })] } });
    route(() => refused(409, 'file_in_use', 'This file was already sent in a message'));
    await expect(store().removeFile(PROJECT_ID, 'd1')).rejects.toMatchObject({ code: 'file_in_use' });
    expect(store().files[PROJECT_ID]?.map((f) => f._id)).toEqual(['d1']);
  });
});

describe('a new chat in a project', () => {
  it('sends projectId with no conversationId, and keeps its draft apart from the plain new chat', () => {
    const emit = vi.spyOn(chatSocket, 'emit').mockReturnValue(true);
    const key = newChatKey(PROJECT_ID);
    chat().setDraft(key, 'Which roses?');
    const clientId = chat().send({ conversationId: null, content: 'Which roses?', model: null, webSearch: false, projectId: PROJECT_ID });
    expect(emit.mock.calls[0]?.[1]).toMatchObject({ clientId, conversationId: null, content: 'Which roses?', projectId: PROJECT_ID });
    expect(chat().drafts[key]).toBe('');
    expect(chat().drafts[newChatKey(null)]).toBeUndefined();
  });

  it('never sends projectId with a conversation', () => {
    const emit = vi.spyOn(chatSocket, 'emit').mockReturnValue(true);
    chat().send({ conversationId: 'c1', content: 'More', model: null, webSearch: false, projectId: PROJECT_ID });
    expect(emit.mock.calls[0]?.[1]).toMatchObject({ conversationId: 'c1', projectId: null });
  });

  it('a refused send puts the text back into the project’s new chat', () => {
    const key = newChatKey(PROJECT_ID);
    const clientId = chat().send({ conversationId: null, content: 'Which roses?', model: null, webSearch: false, projectId: PROJECT_ID })!;
    chat().onError({ clientId, code: 'premium_required', message: 'Project management is a premium feature', field: 'projectManagement' });
    expect(chat().drafts[key]).toBe('Which roses?');
    expect(chat().errors[key]).toMatchObject({ code: 'premium_required', message: 'Project management is a premium feature' });
    expect(chat().errors[newChatKey(null)]).toBeUndefined();
  });

  it('its conversation takes the choices made in the project’s new chat', () => {
    const key = newChatKey(PROJECT_ID);
    chat().setOptions(key, { model: 'gpt-4.1-mini' });
    const clientId = chat().send({ conversationId: null, content: 'Hi', model: 'gpt-4.1-mini', webSearch: false, projectId: PROJECT_ID })!;
    chat().onConversationCreated({ clientId, conversation: conversation({ _id: 'c5', projectId: PROJECT_ID }) });
    expect(chat().options.c5?.model).toBe('gpt-4.1-mini');
    expect(chat().options[key]).toBeUndefined();
  });
});
