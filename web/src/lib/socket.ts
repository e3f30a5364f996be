/**
 * The one websocket of a tab (DESIGN.md "Web client socket", docs/protocol.md). A
 * socket.io-like `on(type, fn)` / `emit(type, payload)` over `/api/ws`, which:
 * - authenticates with a first `{"type":"auth","token":…}` frame (a browser cannot set
 *   headers on a websocket, and the frame works whether or not cookies are sent);
 * - reconnects with exponential backoff and full jitter (1 s doubling to 30 s), because
 *   every tab of a restarted instance reconnects at the same moment;
 * - after each `ready`, re-sends `conversation.open` for the conversations the app shows,
 *   so their streaming answers resume (frames are not replayed);
 * - sends a `ping` frame every 25 s and drops a connection with no `pong` in 10 s, since
 *   browsers do not expose websocket-level pings;
 * - on `session.revoked`, keeps the tab signed in if this tab already holds a newer token
 *   (its own password change), else stops and raises `session.ended`. Tabs of one browser
 *   share the stored token, so after a `password_changed` it first waits a little
 *   (`revocationGraceMs`) for the tab that changed the password to store its new token,
 *   and reconnects with that one if it comes.
 */
import { api, isApiError } from './api-client';
import {
  asServerFrame,
  type ClientFrameType,
  type ClientFrames,
  type RevokeReason,
  type SocketEventMap,
  type SocketEventType,
} from './socket-protocol';
import { getToken } from './token';

export type SocketStatus =
  /** Not started, or stopped (logged out). */
  | 'idle'
  /** Opening and authenticating. */
  | 'connecting'
  /** Authenticated: `ready` arrived. */
  | 'open'
  /** Lost; waiting out the backoff before the next attempt. */
  | 'reconnecting';

/** What the module needs of a WebSocket, so tests can pass a fake one. */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface BackoffOptions {
  /** First delay cap, in ms. */
  baseMs: number;
  /** The delay never grows past this, in ms. */
  capMs: number;
  /** A connection that stays up this long after `ready` resets the delay. */
  resetAfterMs: number;
}

export interface HeartbeatOptions {
  intervalMs: number;
  /** No `pong` within this long after a `ping` means the connection is dead. */
  timeoutMs: number;
}

export interface ChatSocketOptions {
  getToken: () => string | null;
  url?: () => string;
  createWebSocket?: (url: string) => WebSocketLike;
  /** Source of jitter; injectable so tests are deterministic. */
  random?: () => number;
  /**
   * Asked after a 1008 `unauthorized` close, which may also come from a storage failure
   * on the server: resolve true if the session still holds (reconnect), false if not.
   */
  verifySession?: () => Promise<boolean>;
  backoff?: Partial<BackoffOptions>;
  heartbeat?: Partial<HeartbeatOptions>;
  /**
   * After a `password_changed` revocation of the stored token, how long to wait for a
   * sibling tab (the one that changed the password) to store its new token, in ms.
   */
  revocationGraceMs?: number;
  onListenerError?: (error: unknown) => void;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, capMs: 30_000, resetAfterMs: 10_000 };
export const DEFAULT_HEARTBEAT: HeartbeatOptions = { intervalMs: 25_000, timeoutMs: 10_000 };
export const DEFAULT_REVOCATION_GRACE_MS = 3000;
/** How often the stored token is looked at during the revocation grace. */
const TOKEN_POLL_MS = 100;

const CLOSE_POLICY = 1008;
const REASON_REVOKED = 'session revoked';
const REASON_UNAUTHORIZED_PREFIX = 'unauthorized';
const WS_OPEN = 1;

/**
 * Full jitter: a random wait between 0 and min(cap, base·2^attempt).
 * `attempt` counts the failed attempts since the last stable connection, from 0.
 */
export function backoffDelay(
  attempt: number,
  random: () => number = Math.random,
  { baseMs, capMs }: Pick<BackoffOptions, 'baseMs' | 'capMs'> = DEFAULT_BACKOFF,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.floor(random() * ceiling);
}

export function defaultSocketUrl(): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/api/ws`;
}

type Listener<K extends SocketEventType> = (payload: SocketEventMap[K]) => void;
type AnyListener = (payload: unknown) => void;

export class ChatSocket {
  private readonly options: Required<
    Pick<ChatSocketOptions, 'getToken' | 'url' | 'createWebSocket' | 'random'>
  > &
    ChatSocketOptions;
  private readonly backoff: BackoffOptions;
  private readonly heartbeat: HeartbeatOptions;

  private ws: WebSocketLike | null = null;
  /** The token the current connection authenticated (or tries to) with. */
  private authToken: string | null = null;
  private currentStatus: SocketStatus = 'idle';
  private attempt = 0;
  private stopped = true;
  private revoking = false;

  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private stableTimer: ReturnType<typeof setTimeout> | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private pongTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly listeners = new Map<SocketEventType, Set<AnyListener>>();
  private readonly statusListeners = new Set<() => void>();
  /** Conversations the app shows, with how many views hold each. */
  private readonly openConversations = new Map<string, number>();
  private readonly pendingTokenChanges = new Set<Promise<unknown>>();

  constructor(options: ChatSocketOptions) {
    this.options = {
      url: defaultSocketUrl,
      createWebSocket: (url) => new WebSocket(url),
      random: Math.random,
      ...options,
    };
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.heartbeat = { ...DEFAULT_HEARTBEAT, ...options.heartbeat };
    if (typeof window !== 'undefined') {
      // Back online: try now instead of waiting out a long backoff.
      window.addEventListener('online', () => {
        if (this.currentStatus === 'reconnecting') this.connectNow();
      });
    }
  }

  get status(): SocketStatus {
    return this.currentStatus;
  }

  /** For useSyncExternalStore. */
  subscribeStatus = (listener: () => void): (() => void) => {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  };

  getStatus = (): SocketStatus => this.currentStatus;

  /**
   * Connects with the stored token. A no-op while connected with that same token; with
   * a different token (another login), the old connection is replaced.
   */
  start(): void {
    const token = this.options.getToken();
    if (!token) {
      this.stop();
      return;
    }
    if (!this.stopped && token === this.authToken && this.currentStatus !== 'reconnecting') return;
    this.stopped = false;
    this.attempt = 0;
    this.connectNow();
  }

  /** Closes for good (logout): no reconnect, and the open conversations are forgotten. */
  stop(): void {
    this.stopped = true;
    this.revoking = false;
    this.clearTimers();
    this.detachAndClose(1000, 'logout');
    this.authToken = null;
    this.openConversations.clear();
    this.setStatus('idle');
  }

  on<K extends SocketEventType>(type: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(type);
    if (!set) {
      set = new Set();
      this.listeners.set(type, set);
    }
    set.add(listener as AnyListener);
    return () => this.off(type, listener);
  }

  off<K extends SocketEventType>(type: K, listener: Listener<K>): void {
    this.listeners.get(type)?.delete(listener as AnyListener);
  }

  /**
   * Sends a frame. Returns false when not connected: frames are not queued, because a
   * `chat.send` replayed after a reconnect could be processed twice (docs/protocol.md
   * "Reconnecting": look for its clientId first). The caller decides what to do.
   */
  emit<K extends ClientFrameType>(type: K, payload: ClientFrames[K]): boolean {
    if (this.currentStatus !== 'open' || !this.ws || this.ws.readyState !== WS_OPEN) return false;
    this.ws.send(JSON.stringify({ ...payload, type }));
    return true;
  }

  /**
   * Marks a conversation as shown: `conversation.open` is sent now (if connected) and
   * again after every reconnect, until the returned release function is called.
   */
  openConversation(conversationId: string): () => void {
    this.openConversations.set(conversationId, (this.openConversations.get(conversationId) ?? 0) + 1);
    this.emit('conversation.open', { conversationId });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const count = (this.openConversations.get(conversationId) ?? 1) - 1;
      if (count > 0) this.openConversations.set(conversationId, count);
      else this.openConversations.delete(conversationId);
    };
  }

  get openConversationIds(): string[] {
    return [...this.openConversations.keys()];
  }

  /**
   * A call that will store a new token (a password change) is in flight: a
   * `session.revoked` arriving meanwhile waits for it before deciding between
   * "reconnect with the new token" and "log out" (the frame can beat the HTTP answer).
   */
  deferRevocation<T>(tokenChange: Promise<T>): Promise<T> {
    this.pendingTokenChanges.add(tokenChange);
    const forget = () => this.pendingTokenChanges.delete(tokenChange);
    tokenChange.then(forget, forget);
    return tokenChange;
  }

  // --- connection lifecycle -------------------------------------------------------------

  private connectNow(): void {
    clearTimeout(this.reconnectTimer);
    this.detachAndClose(1000, 'reconnect');
    const token = this.options.getToken();
    if (!token) {
      this.stop();
      return;
    }
    this.authToken = token;
    this.revoking = false;
    this.setStatus('connecting');

    let ws: WebSocketLike;
    try {
      ws = this.options.createWebSocket(this.options.url());
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', token }));
    ws.onmessage = (event) => this.handleMessage(event);
    ws.onclose = (event) => {
      if (this.ws === ws) this.handleClose(event.code, event.reason);
    };
    // An error is always followed by a close, which does the work.
    ws.onerror = () => undefined;
  }

  private handleMessage(event: MessageEvent): void {
    if (typeof event.data !== 'string') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(event.data);
    } catch {
      return;
    }
    const frame = asServerFrame(parsed);
    if (!frame) return;

    switch (frame.type) {
      case 'ready':
        this.onReady();
        break;
      case 'pong':
        clearTimeout(this.pongTimer);
        break;
      case 'session.revoked':
        void this.handleRevoked(revokeReason(frame.reason));
        return; // the app hears about it only as `session.ended`, if at all
      default:
        break;
    }
    this.dispatch(frame.type, frame);
  }

  private onReady(): void {
    this.setStatus('open');
    clearTimeout(this.stableTimer);
    this.stableTimer = setTimeout(() => {
      this.attempt = 0;
    }, this.backoff.resetAfterMs);
    this.startHeartbeat();
    for (const conversationId of this.openConversations.keys()) {
      this.emit('conversation.open', { conversationId });
    }
  }

  private handleClose(code: number | undefined, reason: string | undefined): void {
    this.clearTimers();
    this.ws = null;
    if (this.stopped) return;

    if (code === CLOSE_POLICY && reason === REASON_REVOKED) {
      // The close can overtake the frame on a slow tab: treat it the same.
      void this.handleRevoked('password_changed');
      return;
    }
    if (code === CLOSE_POLICY && reason?.startsWith(REASON_UNAUTHORIZED_PREFIX)) {
      void this.handleUnauthorized();
      return;
    }
    this.scheduleReconnect();
  }

  private async handleUnauthorized(): Promise<void> {
    this.setStatus('reconnecting');
    const current = this.options.getToken();
    if (current !== this.authToken) {
      // The token changed meanwhile (login, password change): try the new one.
      if (current) this.connectNow();
      else this.end('unauthorized');
      return;
    }
    const stillValid = this.options.verifySession ? await this.options.verifySession().catch(() => true) : true;
    if (this.stopped) return;
    if (stillValid) this.scheduleReconnect();
    else this.end('unauthorized');
  }

  private async handleRevoked(reason: RevokeReason): Promise<void> {
    if (this.revoking || this.stopped) return;
    this.revoking = true;
    const revokedToken = this.authToken;
    this.clearTimers();
    this.detachAndClose(1000, 'revoked');
    this.setStatus('reconnecting');
    // Our own password change may still be on its way with the new token.
    while (this.pendingTokenChanges.size > 0) {
      await Promise.allSettled([...this.pendingTokenChanges]);
    }
    if (this.stopped) return;
    // The app may already have reconnected with the new token (start()) meanwhile.
    if (this.authToken !== revokedToken) return;
    if (reason === 'password_changed' && this.options.getToken() === revokedToken) {
      // Another tab of this browser may have changed the password: its new token lands
      // in the shared storage a moment after the frame.
      await this.waitForTokenChange(revokedToken);
      if (this.stopped || this.authToken !== revokedToken) return;
    }
    const current = this.options.getToken();
    if (current && current !== revokedToken) {
      this.attempt = 0;
      this.connectNow();
    } else {
      this.end(reason);
    }
  }

  /** Resolves once the stored token is no longer `token`, or after the grace period. */
  private waitForTokenChange(token: string | null): Promise<void> {
    const graceMs = this.options.revocationGraceMs ?? DEFAULT_REVOCATION_GRACE_MS;
    return new Promise((resolve) => {
      let waited = 0;
      const check = () => {
        if (this.stopped || this.authToken !== token || this.options.getToken() !== token || waited >= graceMs) {
          resolve();
          return;
        }
        const step = Math.min(TOKEN_POLL_MS, graceMs - waited);
        waited += step;
        setTimeout(check, step);
      };
      check();
    });
  }

  private end(reason: RevokeReason | 'unauthorized'): void {
    this.stop();
    this.dispatch('session.ended', { reason });
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    const delay = backoffDelay(this.attempt, this.options.random, this.backoff);
    this.attempt += 1;
    this.setStatus('reconnecting');
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.connectNow(), delay);
  }

  private startHeartbeat(): void {
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => {
      if (!this.emit('ping', {})) return;
      clearTimeout(this.pongTimer);
      this.pongTimer = setTimeout(() => this.dropDeadConnection(), this.heartbeat.timeoutMs);
    }, this.heartbeat.intervalMs);
  }

  /**
   * No pong: the connection is dead even if the browser has not noticed. Closing it may
   * take the browser a long time to confirm, so reconnect without waiting for its close.
   */
  private dropDeadConnection(): void {
    this.clearTimers();
    this.detachAndClose(4000, 'heartbeat timeout');
    this.scheduleReconnect();
  }

  private detachAndClose(code: number, reason: string): void {
    const ws = this.ws;
    if (!ws) return;
    this.ws = null;
    ws.onopen = null;
    ws.onmessage = null;
    ws.onclose = null;
    ws.onerror = null;
    try {
      ws.close(code, reason);
    } catch {
      // Already closed.
    }
  }

  private clearTimers(): void {
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.stableTimer);
    clearInterval(this.pingTimer);
    clearTimeout(this.pongTimer);
  }

  private setStatus(status: SocketStatus): void {
    if (status === this.currentStatus) return;
    this.currentStatus = status;
    this.statusListeners.forEach((listener) => listener());
  }

  private dispatch<K extends SocketEventType>(type: K, payload: unknown): void {
    const set = this.listeners.get(type);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(payload);
      } catch (error) {
        // One failing listener must not starve the others or kill the connection.
        (this.options.onListenerError ?? console.error)(error);
      }
    }
  }
}

/**
 * A `session.revoked` frame's reason as the client acts on it (the contract sends a plain
 * string). One it does not know ends the session like a refused token: only a password
 * change waits for a sibling tab's new token.
 */
function revokeReason(reason: string): RevokeReason {
  switch (reason) {
    case 'password_changed':
    case 'password_reset':
    case 'account_deleted':
    case 'account_suspended':
      return reason;
    default:
      return 'token_invalid';
  }
}

// --- the tab's socket -----------------------------------------------------------------

/** Whether the stored token still works, asked after a 1008 `unauthorized` close. */
async function verifySession(): Promise<boolean> {
  try {
    await api.get('/auth/profile');
    return true;
  } catch (error) {
    // A 401 also made the api-client log out; anything else (a storage hiccup on the
    // server, a network blip) is worth another try.
    return !(isApiError(error) && error.status === 401);
  }
}

export const chatSocket = new ChatSocket({ getToken, verifySession });
