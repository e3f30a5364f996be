import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, ChatSocket, type ChatSocketOptions, type WebSocketLike } from './socket';

/** A WebSocket the test drives by hand. */
class FakeWebSocket implements WebSocketLike {
  readyState = 0;
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  sent: unknown[] = [];
  closedWith: { code?: number; reason?: string } | null = null;

  constructor(readonly url: string) {}

  send(data: string) {
    this.sent.push(JSON.parse(data));
  }

  close(code?: number, reason?: string) {
    this.closedWith = { code, reason };
    this.readyState = 3;
  }

  // --- driven by the test ---
  open() {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
  }

  receive(frame: object) {
    this.onmessage?.(new MessageEvent('message', { data: JSON.stringify(frame) }));
  }

  drop(code = 1006, reason = '') {
    this.readyState = 3;
    this.onclose?.({ code, reason } as CloseEvent);
  }
}

const READY = { type: 'ready', user: { _id: 'u1' }, usage: {} };

let sockets: FakeWebSocket[];
let token: string | null;

function makeSocket(overrides: Partial<ChatSocketOptions> = {}) {
  return new ChatSocket({
    getToken: () => token,
    url: () => 'ws://test/api/ws',
    createWebSocket: (url) => {
      const ws = new FakeWebSocket(url);
      sockets.push(ws);
      return ws;
    },
    random: () => 1, // the top of the jitter range, so delays are predictable
    ...overrides,
  });
}

const latest = () => sockets.at(-1)!;

/** Opens the newest connection and authenticates it. */
function connect() {
  latest().open();
  latest().receive(READY);
}

beforeEach(() => {
  vi.useFakeTimers();
  sockets = [];
  token = 'tok-1';
});

afterEach(() => {
  vi.useRealTimers();
});

describe('backoffDelay', () => {
  it('doubles from 1 s up to a 30 s cap', () => {
    const top = () => 1;
    expect([0, 1, 2, 3, 4, 5, 6, 10].map((attempt) => backoffDelay(attempt, top))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
  });

  it('picks a random wait between 0 and the ceiling (full jitter)', () => {
    expect(backoffDelay(3, () => 0)).toBe(0);
    expect(backoffDelay(3, () => 0.5)).toBe(4000);
    expect(backoffDelay(3, () => 0.999)).toBeLessThan(8000);
  });
});

describe('connecting', () => {
  it('authenticates with a first auth frame', () => {
    const socket = makeSocket();
    socket.start();
    expect(latest().url).toBe('ws://test/api/ws');
    expect(socket.status).toBe('connecting');

    latest().open();
    expect(latest().sent).toEqual([{ type: 'auth', token: 'tok-1' }]);

    latest().receive(READY);
    expect(socket.status).toBe('open');
  });

  it('does not connect without a token', () => {
    token = null;
    const socket = makeSocket();
    socket.start();
    expect(sockets).toHaveLength(0);
    expect(socket.status).toBe('idle');
  });

  it('replaces the connection when the token changes', () => {
    const socket = makeSocket();
    socket.start();
    connect();
    socket.start(); // same token: nothing happens
    expect(sockets).toHaveLength(1);

    token = 'tok-2';
    socket.start();
    expect(sockets).toHaveLength(2);
    expect(sockets[0]!.closedWith).not.toBeNull();
    latest().open();
    expect(latest().sent).toEqual([{ type: 'auth', token: 'tok-2' }]);
  });
});

describe('on / emit', () => {
  it('delivers frames by type to their listeners until they unsubscribe', () => {
    const socket = makeSocket();
    const deltas: unknown[] = [];
    const off = socket.on('message.delta', (frame) => deltas.push(frame.delta));
    const ready = vi.fn();
    socket.on('ready', ready);
    socket.start();
    connect();

    latest().receive({ type: 'message.delta', conversationId: 'c', messageId: 'm', seq: 1, delta: 'Hel' });
    latest().receive({ type: 'message.completed', conversationId: 'c', message: {}, finishReason: 'stop' });
    off();
    latest().receive({ type: 'message.delta', conversationId: 'c', messageId: 'm', seq: 2, delta: 'lo' });

    expect(deltas).toEqual(['Hel']);
    expect(ready).toHaveBeenCalledWith(expect.objectContaining({ user: { _id: 'u1' } }));
  });

  it('ignores text that is not a frame', () => {
    const socket = makeSocket();
    const listener = vi.fn();
    socket.on('error', listener);
    socket.start();
    connect();
    latest().onmessage?.(new MessageEvent('message', { data: 'not json' }));
    latest().onmessage?.(new MessageEvent('message', { data: '[1,2]' }));
    expect(listener).not.toHaveBeenCalled();
  });

  it('keeps delivering when one listener throws', () => {
    const onListenerError = vi.fn();
    const socket = makeSocket({ onListenerError });
    const second = vi.fn();
    socket.on('pong', () => {
      throw new Error('bad listener');
    });
    socket.on('pong', second);
    socket.start();
    connect();
    latest().receive({ type: 'pong' });
    expect(second).toHaveBeenCalled();
    expect(onListenerError).toHaveBeenCalled();
  });

  it('sends frames once authenticated, and refuses (without queueing) before', () => {
    const socket = makeSocket();
    socket.start();
    latest().open();
    expect(socket.emit('chat.cancel', { conversationId: 'c1' })).toBe(false);

    latest().receive(READY);
    const send = {
      clientId: 'k1',
      conversationId: null,
      content: 'hi',
      model: null,
      webSearch: false,
      deepSearch: false,
      imageGeneration: false,
      projectId: null,
      attachments: [],
      editOf: null,
    };
    expect(socket.emit('chat.send', send)).toBe(true);
    expect(latest().sent).toEqual([{ type: 'auth', token: 'tok-1' }, { type: 'chat.send', ...send }]);
  });
});

describe('reconnecting', () => {
  it('reconnects with growing delays and resets them once a connection holds', () => {
    const socket = makeSocket();
    socket.start();
    connect();

    latest().drop();
    expect(socket.status).toBe('reconnecting');
    vi.advanceTimersByTime(999);
    expect(sockets).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(2);

    latest().drop(); // fails before `ready`
    vi.advanceTimersByTime(1999);
    expect(sockets).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(3);

    connect();
    vi.advanceTimersByTime(10_000); // stays up: the delay starts over
    latest().drop();
    vi.advanceTimersByTime(1000);
    expect(sockets).toHaveLength(4);
  });

  it('re-sends conversation.open for the conversations the app shows', () => {
    const socket = makeSocket();
    const release = socket.openConversation('c1');
    socket.openConversation('c2');
    socket.start();
    connect();
    expect(latest().sent.slice(1)).toEqual([
      { type: 'conversation.open', conversationId: 'c1' },
      { type: 'conversation.open', conversationId: 'c2' },
    ]);

    release();
    latest().drop(1013, 'slow consumer: too many frames waiting');
    vi.advanceTimersByTime(1000);
    connect();
    expect(latest().sent).toEqual([
      { type: 'auth', token: 'tok-1' },
      { type: 'conversation.open', conversationId: 'c2' },
    ]);
  });

  it('sends conversation.open at once when already connected', () => {
    const socket = makeSocket();
    socket.start();
    connect();
    socket.openConversation('c9');
    expect(latest().sent.at(-1)).toEqual({ type: 'conversation.open', conversationId: 'c9' });
  });

  it('pings every 25 s and reconnects when no pong comes within 10 s', () => {
    const socket = makeSocket();
    socket.start();
    connect();

    vi.advanceTimersByTime(25_000);
    expect(latest().sent.at(-1)).toEqual({ type: 'ping' });
    latest().receive({ type: 'pong' });
    vi.advanceTimersByTime(10_000);
    expect(sockets).toHaveLength(1);

    vi.advanceTimersByTime(15_000); // next ping, and no answer this time
    vi.advanceTimersByTime(10_000);
    expect(socket.status).toBe('reconnecting');
    vi.advanceTimersByTime(30_000);
    expect(sockets).toHaveLength(2);
  });

  it('stops for good on logout', () => {
    const socket = makeSocket();
    socket.openConversation('c1');
    socket.start();
    connect();
    socket.stop();
    expect(socket.status).toBe('idle');
    expect(socket.openConversationIds).toEqual([]);
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
  });
});

describe('revoked sessions', () => {
  it('ends the session when the token it holds was revoked', () => {
    const socket = makeSocket();
    const ended = vi.fn();
    socket.on('session.ended', ended);
    socket.start();
    connect();

    latest().receive({ type: 'session.revoked', reason: 'password_reset' });
    return vi.waitFor(() => {
      expect(ended).toHaveBeenCalledWith({ reason: 'password_reset' });
      expect(socket.status).toBe('idle');
      vi.advanceTimersByTime(60_000);
      expect(sockets).toHaveLength(1);
    });
  });

  it('reconnects with the new token after this tab changed the password', async () => {
    const socket = makeSocket();
    const ended = vi.fn();
    socket.on('session.ended', ended);
    socket.start();
    connect();

    // The frame arrives before the password change's HTTP answer.
    let answer!: () => void;
    void socket.deferRevocation(new Promise<void>((resolve) => (answer = resolve)));
    latest().receive({ type: 'session.revoked', reason: 'password_changed' });
    await Promise.resolve();
    expect(sockets).toHaveLength(1);

    token = 'tok-after-change';
    answer();
    await vi.waitFor(() => expect(sockets).toHaveLength(2));
    latest().open();
    expect(latest().sent).toEqual([{ type: 'auth', token: 'tok-after-change' }]);
    expect(ended).not.toHaveBeenCalled();
  });

  it('stays connected when the app reconnects with the new token before the revocation settles', async () => {
    const socket = makeSocket();
    const ended = vi.fn();
    socket.on('session.ended', ended);
    socket.start();
    connect();

    let answer!: () => void;
    void socket.deferRevocation(new Promise<void>((resolve) => (answer = resolve)));
    latest().receive({ type: 'session.revoked', reason: 'password_changed' });
    // The app stores the new token, and its store subscription calls start() at once.
    token = 'tok-after-change';
    socket.start();
    answer();
    await vi.waitFor(() => expect(sockets).toHaveLength(2));
    await Promise.resolve();
    connect();
    expect(latest().sent[0]).toEqual({ type: 'auth', token: 'tok-after-change' });
    expect(socket.status).toBe('open');
    expect(ended).not.toHaveBeenCalled();
    expect(sockets).toHaveLength(2);
  });

  it('treats a 1008 "session revoked" close like the frame', async () => {
    const socket = makeSocket();
    const ended = vi.fn();
    socket.on('session.ended', ended);
    socket.start();
    connect();
    latest().drop(1008, 'session revoked');
    await vi.advanceTimersByTimeAsync(3000); // no newer token came from a sibling tab
    await vi.waitFor(() => expect(ended).toHaveBeenCalledOnce());
  });

  it('waits briefly for a sibling tab’s new token after a password change, and uses it', async () => {
    const socket = makeSocket();
    const ended = vi.fn();
    socket.on('session.ended', ended);
    socket.start();
    connect();

    latest().receive({ type: 'session.revoked', reason: 'password_changed' });
    await vi.advanceTimersByTimeAsync(1500);
    expect(ended).not.toHaveBeenCalled();
    expect(socket.status).toBe('reconnecting');

    // The tab that changed the password stores its new token in the shared storage.
    token = 'tok-from-sibling';
    await vi.advanceTimersByTimeAsync(200);
    expect(sockets).toHaveLength(2);
    latest().open();
    expect(latest().sent).toEqual([{ type: 'auth', token: 'tok-from-sibling' }]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(ended).not.toHaveBeenCalled();
  });

  it('ends the session when no new token comes within the grace period', async () => {
    const socket = makeSocket({ revocationGraceMs: 3000 });
    const ended = vi.fn();
    socket.on('session.ended', ended);
    socket.start();
    connect();

    latest().receive({ type: 'session.revoked', reason: 'password_changed' });
    await vi.advanceTimersByTimeAsync(2900);
    expect(ended).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(200);
    expect(ended).toHaveBeenCalledWith({ reason: 'password_changed' });
    expect(socket.status).toBe('idle');
    expect(sockets).toHaveLength(1);
  });

  it('does not wait after a password reset', async () => {
    const socket = makeSocket();
    const ended = vi.fn();
    socket.on('session.ended', ended);
    socket.start();
    connect();
    latest().receive({ type: 'session.revoked', reason: 'password_reset' });
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toHaveBeenCalledWith({ reason: 'password_reset' });
  });

  it('checks the session after a 1008 unauthorized close', async () => {
    const verifySession = vi.fn().mockResolvedValueOnce(true).mockResolvedValueOnce(false);
    const socket = makeSocket({ verifySession });
    const ended = vi.fn();
    socket.on('session.ended', ended);
    socket.start();
    latest().open();

    latest().drop(1008, 'unauthorized: token missing, expired or revoked');
    await vi.waitFor(() => expect(verifySession).toHaveBeenCalledTimes(1));
    await vi.advanceTimersByTimeAsync(1000); // still valid: reconnect with backoff
    expect(sockets).toHaveLength(2);

    latest().open();
    latest().drop(1008, 'unauthorized: token missing, expired or revoked');
    await vi.waitFor(() => expect(ended).toHaveBeenCalledWith({ reason: 'unauthorized' }));
    expect(socket.status).toBe('idle');
  });
});
