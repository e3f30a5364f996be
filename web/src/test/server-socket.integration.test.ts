// @vitest-environment node
/**
 * ChatSocket against a running chat-server, over Node's own WebSocket (jsdom's clashes
 * with Node's event classes under vitest): a streamed answer, settings reaching every tab,
 * and a password change that keeps the changing tab connected while the other tab ends.
 * Opt-in: see server-helpers.ts and web/README.md. On Node 20, run with
 * NODE_OPTIONS=--experimental-websocket (Node 22 has WebSocket built in).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ChatSocket } from '@/lib/socket';
import type { SocketEventMap, SocketEventType } from '@/lib/socket-protocol';
import { hasServer, registerAccount, SERVER, uniqueEmail } from './server-helpers';

const hasWebSocket = typeof WebSocket !== 'undefined';

/** Records every frame of the given types. */
function record(socket: ChatSocket, types: SocketEventType[]) {
  const frames: { type: SocketEventType; payload: unknown }[] = [];
  for (const type of types) socket.on(type, (payload) => frames.push({ type, payload }));
  return <K extends SocketEventType>(type: K) =>
    frames.filter((f) => f.type === type).map((f) => f.payload as SocketEventMap[K]);
}

async function call<T>(method: string, path: string, token: string, body?: unknown): Promise<T> {
  const response = await fetch(`${SERVER}/api${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

describe.skipIf(!hasServer || !hasWebSocket)('ChatSocket against a running chat-server', () => {
  const email = uniqueEmail('web-socket');
  let token = '';
  const sockets: ChatSocket[] = [];

  /** A tab: its own socket over the shared token. */
  function openTab() {
    const socket = new ChatSocket({ getToken: () => token, url: () => `${SERVER!.replace(/^http/, 'ws')}/api/ws` });
    sockets.push(socket);
    return socket;
  }

  afterAll(() => sockets.forEach((s) => s.stop()));

  it('authenticates with the auth frame and streams an answer in order', async () => {
    token = await registerAccount(email, 'secret1');
    const tab = openTab();
    const frames = record(tab, [
      'ready',
      'conversation.created',
      'message.created',
      'message.delta',
      'message.completed',
      'usage.updated',
    ]);
    tab.start();
    await vi.waitFor(() => expect(frames('ready')).toHaveLength(1), { timeout: 5000 });
    expect(frames('ready')[0]!.user.email).toBe(email);
    expect(frames('ready')[0]!.usage.limitInfo.limitType).toBe('free');

    const send = {
      clientId: 'web-1',
      conversationId: null,
      content: 'Hello there',
      model: null,
      webSearch: false,
      deepSearch: false,
      imageGeneration: false,
      projectId: null,
      attachments: [],
      editOf: null,
    };
    expect(tab.emit('chat.send', send)).toBe(true);
    await vi.waitFor(() => expect(frames('message.completed')).toHaveLength(1), { timeout: 30_000, interval: 100 });

    expect(frames('conversation.created')[0]!.clientId).toBe('web-1');
    expect(frames('message.created').map((f) => f.message.role)).toEqual(['user', 'assistant']);
    const deltas = frames('message.delta');
    expect(deltas.map((d) => d.seq)).toEqual(deltas.map((_, i) => i + 1));
    const completed = frames('message.completed')[0]!;
    expect(completed.finishReason).toBe('stop');
    expect(deltas.map((d) => d.delta).join('')).toBe(completed.message.content);
    expect(frames('usage.updated')[0]!.limitInfo.services.responses.daily.used).toBe(1);
  }, 40_000);

  it('brings settings changed elsewhere to every tab', async () => {
    const [tab] = sockets;
    const frames = record(tab!, ['settings.updated']);
    await call('PUT', '/settings', token, { language: 'hu-HU' });
    await vi.waitFor(() => expect(frames('settings.updated')[0]?.settings.language).toBe('hu-HU'), { timeout: 5000 });
  });

  it('keeps the tab that changed the password, and ends the session of the others', async () => {
    const changingTab = sockets[0]!;
    const otherTab = new ChatSocket({
      // The other tab still holds the old token: it is another browser or device.
      getToken: ((old) => () => old)(token),
      url: () => `${SERVER!.replace(/^http/, 'ws')}/api/ws`,
      verifySession: () => Promise.resolve(false),
    });
    sockets.push(otherTab);
    const other = record(otherTab, ['ready', 'session.ended']);
    otherTab.start();
    await vi.waitFor(() => expect(other('ready')).toHaveLength(1), { timeout: 5000 });

    const changing = record(changingTab, ['ready', 'session.ended']);
    await changingTab.deferRevocation(
      call<{ token: string }>('PUT', '/auth/password', token, {
        currentPassword: 'secret1',
        newPassword: 'secret2',
      }).then((answer) => {
        token = answer.token; // this tab stores the fresh token
      }),
    );

    await vi.waitFor(() => expect(changing('ready')).toHaveLength(1), { timeout: 10_000, interval: 100 });
    expect(changing('session.ended')).toHaveLength(0);
    expect(changingTab.status).toBe('open');

    await vi.waitFor(() => expect(other('session.ended')).toEqual([{ reason: 'password_changed' }]), { timeout: 5000 });
    expect(otherTab.status).toBe('idle');
  }, 20_000);
});
