// End-to-end: a finished answer is announced by a browser notification when no tab of the
// user is visible (one tab only), not with the setting off; and the service worker keeps
// the app shell loading offline. Debian's headless Chromium against the real chat-server.
//
// Real OS notifications cannot be seen headless: an init script replaces
// `window.Notification` with a recorder (`window.__notes`) that reports the permission the
// browser really holds (granted to the context with `grantPermissions`). Headless pages
// are always visible, so the same script lets the test hide a page (`window.__hide()`).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { dismissCookies, launchChromium, registerOverApi } from './flows.mjs';

const PASSWORD = 'secret12';

let server;
let browser;
let context;

function recordNotifications() {
  const Real = window.Notification;
  window.__notes = [];
  let hidden = false;
  Object.defineProperty(Document.prototype, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => hidden });
  const setHidden = (value) => {
    hidden = value;
    document.dispatchEvent(new Event('visibilitychange'));
  };
  window.__hide = () => setHidden(true);
  window.__show = () => setHidden(false);
  class RecordedNotification extends EventTarget {
    static get permission() {
      return Real ? Real.permission : 'denied';
    }
    static requestPermission() {
      return Real ? Real.requestPermission() : Promise.resolve('denied');
    }
    constructor(title, options = {}) {
      super();
      this.title = title;
      this.onclick = null;
      window.__notes.push({ title, body: options.body, tag: options.tag });
    }
    close() {}
  }
  window.Notification = RecordedNotification;
}

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  await context.grantPermissions(['notifications'], { origin: server.url });
  await context.addInitScript(recordNotifications);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const notes = (p) => p.evaluate(() => window.__notes);
const normalize = (text) => text.replace(/\s+/g, ' ').trim();

/** Sends `text` from `p` (hidden first when `hide`), waits for the complete answer; its text. */
async function ask(p, text, { hide = true } = {}) {
  if (hide) await p.evaluate(() => window.__hide());
  const before = await p.getByTestId('message-assistant').count();
  await p.getByTestId('composer-input').fill(text);
  await p.getByTestId('send-button').click();
  const reply = p.getByTestId('message-assistant').nth(before);
  await reply.and(p.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  return normalize(await reply.innerText());
}

/** Waits past the tabs' agreement (250 ms) and the frame's way to every tab. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

test('a finished answer in a hidden tab shows one notification with the title (or "New answer") and its start', async () => {
  const page = await context.newPage();
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, { name: 'Nora', email: 'nora@example.com', password: PASSWORD });
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  assert.equal(await page.evaluate(() => Notification.permission), 'granted');

  // A second tab of the same user, hidden too: only one of them notifies.
  const other = await context.newPage();
  await other.goto('/chat');
  await other.getByTestId('composer-input').waitFor();
  await other.evaluate(() => window.__hide());

  const answer = await ask(page, 'Tell me about lighthouses');
  await page.waitForURL(/\/chat\/.+/);
  const conversationId = new URL(page.url()).pathname.split('/').at(-1);
  await settle();
  const all = [...(await notes(page)), ...(await notes(other))];
  assert.equal(all.length, 1, `notifications: ${JSON.stringify(all)}`);
  const [note] = all;
  assert.equal(note.tag, conversationId);
  const { title } = await page.evaluate(async (id) => (await (await fetch(`/api/conversations/${id}`)).json()).data ?? {}, conversationId);
  assert.ok(note.title === 'New answer' || note.title === title, `title: ${note.title} (conversation: ${title})`);
  assert.ok(note.body.length > 0 && note.body.length <= 120, `body: ${note.body}`);
  // (The reply's text starts with its label for screen readers, "Assistant:".)
  assert.ok(answer.replace(/^Assistant: /, '').startsWith(note.body.replace(/…$/, '')), `body "${note.body}" is not the start of "${answer}"`);

  // A visible tab of the user: nobody needs a notification.
  await other.evaluate(() => window.__show());
  await ask(page, 'And once more');
  await settle();
  assert.equal((await notes(page)).length + (await notes(other)).length, 1);
  await other.close();

  // The next answer in the conversation, hidden again: its title now.
  const shownBefore = (await notes(page)).length;
  await ask(page, 'A third question');
  await settle();
  const third = (await notes(page)).at(-1);
  assert.equal((await notes(page)).length, shownBefore + 1);
  const now = await page.evaluate(async (id) => (await (await fetch(`/api/conversations/${id}`)).json()).data?.title, conversationId);
  assert.equal(third.title, now || 'New answer');
  assert.equal(third.tag, conversationId);
  await page.close();
});

test('with the setting off, no notification', async () => {
  const page = await context.newPage();
  await page.goto('/settings');
  const toggle = page.getByTestId('settings-notifications');
  await toggle.waitFor();
  assert.equal(await toggle.isChecked(), true);
  await toggle.uncheck();
  assert.equal(await page.getByTestId('settings-notifications-blocked').count(), 0);
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  await ask(page, 'Quietly, please');
  await settle();
  assert.deepEqual(await notes(page), []);

  // On again: notifications come back (the permission is already granted).
  await page.goto('/settings');
  await page.getByTestId('settings-notifications').check();
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  await ask(page, 'Loudly again');
  await settle();
  assert.equal((await notes(page)).length, 1);
  await page.close();
});

test('the service worker caches the shell: offline, a reload still shows the app', async () => {
  const guest = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  const page = await guest.newPage();
  const sw = await page.request.get('/sw.js');
  assert.equal(sw.status(), 200);
  assert.match(sw.headers()['content-type'] ?? '', /javascript/);
  await page.goto('/');
  await page.getByTestId('landing-register').waitFor();
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
  assert.equal(scope, `${server.url}/`);
  // The page is taken over by the worker (clients.claim).
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  const cached = await page.evaluate(async () => {
    const urls = [];
    for (const name of await caches.keys()) {
      for (const request of await (await caches.open(name)).keys()) urls.push(new URL(request.url).pathname);
    }
    return urls;
  });
  assert.ok(cached.includes('/index.html'), JSON.stringify(cached));
  assert.ok(cached.some((path) => path.startsWith('/assets/')), JSON.stringify(cached));
  assert.ok(!cached.some((path) => path.startsWith('/api/')), `an API answer was cached: ${JSON.stringify(cached)}`);

  await guest.setOffline(true);
  await page.reload();
  await page.getByTestId('landing-register').waitFor({ timeout: 10_000 });
  // A deep link too: the cached index.html answers every navigation.
  await page.goto('/privacy-policy');
  await page.getByTestId('privacy-policy').waitFor({ timeout: 10_000 });
  // The API is never answered from the cache: offline, it fails.
  assert.equal(await page.evaluate(() => fetch('/api/health').then(() => 'answered', () => 'failed')), 'failed');
  await guest.setOffline(false);
  await guest.close();
});

test('with the server gone, the cached shell still loads', async () => {
  const own = await startServer();
  const guest = await browser.newContext({ baseURL: own.url, locale: 'en-US' });
  const page = await guest.newPage();
  let running = true;
  try {
    await page.goto('/');
    await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    await own.stop();
    running = false;
    await page.reload();
    await page.getByTestId('landing-register').waitFor({ timeout: 10_000 });
  } finally {
    await guest.close();
    if (running) await own.stop();
  }
});
