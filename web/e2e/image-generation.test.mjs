// End-to-end: image generation, from the composer's "Create image" toggle through the
// server's drawing to an answer that shows the image with a download link, in every tab
// and after a reload, in Debian's headless Chromium against the real chat-server (see
// app.test.mjs). With no model key the server's demo model draws a 256 × 256 picture,
// stored like an upload (re-encoded, a thumbnail).
//
// The demo draws in a few milliseconds, so "Creating the image…" could be up for less
// than a frame. The test's tabs therefore get the end of an image answer (its delta and
// message.completed) a moment late: their socket goes through Playwright's WebSocket
// routing, which passes every frame on in order and holds those two for HOLD_MS.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { dismissCookies, launchChromium, phoneSignedInAs, registerOverApi } from './flows.mjs';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');
const PASSWORD = 'secret12';
const HOLD_MS = 1000;
const IMAGE_MODEL = 'gpt-image-1';

/** Passes the socket's frames on in order, holding the end of an image answer for HOLD_MS. */
async function slowImageEnds(context) {
  await context.routeWebSocket(/\/api\/ws$/, (ws) => {
    const server = ws.connectToServer();
    const imageAnswers = new Set();
    let queue = Promise.resolve();
    ws.onMessage((message) => server.send(message));
    server.onMessage((message) => {
      let hold = false;
      try {
        const frame = JSON.parse(message);
        if (frame.type === 'message.created' && frame.message?.model === IMAGE_MODEL) imageAnswers.add(frame.message._id);
        const id = frame.type === 'message.delta' ? frame.messageId : frame.type === 'message.completed' ? frame.message?._id : null;
        hold = id !== null && imageAnswers.has(id);
      } catch {
        // not JSON: passed on as it is
      }
      queue = queue.then(async () => {
        if (hold) await new Promise((r) => setTimeout(r, HOLD_MS));
        ws.send(message);
      });
    });
    ws.onClose((code, reason) => server.close({ code, reason }));
    server.onClose((code, reason) => ws.close({ code, reason }));
  });
}

let server;
let browser;
let context;
let page;
let conversationUrl;

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  await slowImageEnds(context);
  page = await context.newPage();
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, { name: 'Ida', email: 'ida@example.com', password: PASSWORD });
  // The operator's command: a paid plan without a payment, before the first socket.
  await server.cli(['users', 'set-plan', 'ida@example.com', 'base']);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/**
 * Records, from now on, whether the page showed "Creating the image…" and how (its role
 * and aria-live): the demo draws fast, so the line may be up for a moment only.
 */
async function recordImageProgress(p) {
  await p.evaluate(() => {
    window.imageProgress = [];
    const look = () => {
      for (const status of document.querySelectorAll('[data-testid="image-progress"]')) {
        const seen = `${status.getAttribute('role')}/${status.getAttribute('aria-live')}/${status.textContent}`;
        if (!window.imageProgress.includes(seen)) window.imageProgress.push(seen);
      }
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

/** Waits for the toggle's gate; a timeout says which gate it had instead. */
async function gate(toggle, expected) {
  try {
    await toggle.and(toggle.page().locator(`[data-gate="${expected}"]`)).waitFor({ timeout: 20_000 });
  } catch (error) {
    const had = await toggle.getAttribute('data-gate', { timeout: 1000 }).catch(() => 'no toggle');
    throw new Error(`the image toggle's gate stayed ${had} (expected ${expected}) on ${toggle.page().url()}`, { cause: error });
  }
}

/** Waits until the answer's image has loaded, and returns its file id and natural size. */
async function loadedImage(reply) {
  const img = reply.locator('img').first();
  await img.waitFor();
  await img.scrollIntoViewIfNeeded();
  await reply.page().waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle(), { timeout: 30_000 });
  return img.evaluate((el) => ({
    src: el.getAttribute('src'),
    alt: el.getAttribute('alt'),
    width: el.getAttribute('width'),
    height: el.getAttribute('height'),
    naturalWidth: el.naturalWidth,
  }));
}

/** The answer's Download link: its file URL and name, and what the URL serves (by the cookie alone). */
async function downloadLink(reply) {
  const link = reply.getByRole('link', { name: /^Download/ });
  await link.waitFor();
  assert.equal(await link.innerText(), 'Download');
  const href = await link.getAttribute('href');
  const name = await link.getAttribute('download');
  assert.match(href, /^\/api\/files\/[^/]+$/);
  const served = await reply.page().evaluate(async (url) => {
    const response = await fetch(url);
    const blob = await response.blob();
    const bitmap = await createImageBitmap(blob);
    return { status: response.status, type: response.headers.get('content-type'), width: bitmap.width, height: bitmap.height };
  }, href);
  return { href, name, served };
}

test('a Base user turns on "Create image" and describes one; the answer shows the image with a Download link, in a second tab and after a reload', async () => {
  await page.goto('/chat');
  const toggle = page.getByTestId('image-generation-toggle');
  await gate(toggle, 'available');
  assert.equal(await toggle.innerText(), 'Create image');
  const web = page.getByTestId('web-search-toggle');
  const input = page.getByTestId('composer-input');
  assert.equal(await input.getAttribute('placeholder'), 'Write a message…');
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  assert.equal(await web.getAttribute('aria-pressed'), 'false');
  assert.equal(await input.getAttribute('placeholder'), 'Describe the image you want');

  await recordImageProgress(page);
  await input.fill('A red fox in the snow');
  await page.getByTestId('send-button').click();
  // For one send: off again once sent.
  await toggle.and(page.locator('[aria-pressed="false"]')).waitFor();
  await page.waitForURL(/\/chat\/.+/);
  conversationUrl = page.url();

  const reply = page.getByTestId('message-assistant').last();
  await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 60_000 });
  assert.match(await reply.innerText(), /Here is the image: A red fox in the snow/);
  const seen = await page.evaluate(() => window.imageProgress);
  assert.deepEqual(seen, ['status/polite/Creating the image…'], 'the status line was not seen while the image was made');
  assert.equal(await reply.getByTestId('image-progress').count(), 0);

  const img = await loadedImage(reply);
  assert.ok(img.naturalWidth > 0);
  assert.match(img.src, /^\/api\/files\/[^/]+\/thumbnail$/);
  assert.match(img.alt, /^a-red-fox-in-the-snow/);
  assert.equal(img.width, '256');
  assert.equal(img.height, '256');
  const { href, name, served } = await downloadLink(reply);
  assert.equal(img.src, `${href}/thumbnail`);
  assert.equal(name, img.alt);
  assert.equal(served.status, 200);
  assert.match(served.type, /^image\//);
  assert.deepEqual([served.width, served.height], [256, 256]);

  // A second tab loads the conversation: the image is there too.
  const second = await context.newPage();
  await second.goto(conversationUrl);
  const mirrored = second.getByTestId('message-assistant').first();
  await mirrored.and(second.locator('[data-status="complete"]')).waitFor();
  assert.equal((await loadedImage(mirrored)).src, img.src);
  assert.equal((await downloadLink(mirrored)).href, href);
  await second.close();

  // After a reload (GET /api/conversations/{id}) too.
  await page.reload();
  const reloaded = page.getByTestId('message-assistant').first();
  await reloaded.and(page.locator('[data-status="complete"]')).waitFor();
  assert.ok((await loadedImage(reloaded)).naturalWidth > 0);
  assert.equal((await downloadLink(reloaded)).href, href);
});

test('another tab of the same user watching the conversation sees the next image being made, then the image', async () => {
  const watcher = await context.newPage();
  await watcher.goto(conversationUrl);
  await watcher.getByTestId('message-assistant').first().waitFor();
  await recordImageProgress(watcher);
  await page.goto(conversationUrl);
  await page.getByTestId('message-assistant').first().waitFor();
  const answered = await page.getByTestId('message-assistant').count();
  assert.equal(await watcher.getByTestId('message-assistant').count(), answered);

  // Web search on, then "Create image": only one goes.
  const toggle = page.getByTestId('image-generation-toggle');
  await gate(toggle, 'available');
  const web = page.getByTestId('web-search-toggle');
  if ((await web.getAttribute('data-gate')) === 'available') {
    await web.click();
    assert.equal(await web.getAttribute('aria-pressed'), 'true');
  }
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  assert.equal(await web.getAttribute('aria-pressed'), 'false');
  await page.getByTestId('composer-input').fill('A blue boat on a calm lake');
  await page.getByTestId('send-button').click();

  const mirrored = watcher.getByTestId('message-assistant').nth(answered);
  await mirrored.and(watcher.locator('[data-status="complete"]')).waitFor({ timeout: 60_000 });
  assert.match(await mirrored.innerText(), /Here is the image: A blue boat on a calm lake/);
  const img = await loadedImage(mirrored);
  assert.match(img.alt, /^a-blue-boat/);
  const { served } = await downloadLink(mirrored);
  assert.equal(served.status, 200);
  // The watcher knew it for an image answer by its model alone.
  assert.deepEqual(await watcher.evaluate(() => window.imageProgress), ['status/polite/Creating the image…']);
  const reply = page.getByTestId('message-assistant').nth(answered);
  await reply.and(page.locator('[data-status="complete"]')).waitFor();
  assert.equal((await loadedImage(reply)).src, img.src);
  await watcher.close();
});

test('"Create image" and the search toggles fit 360 px (screenshot kept)', async () => {
  const { phone, page: p } = await phoneSignedInAs(browser, context, server);
  await p.goto(conversationUrl);
  const toggle = p.getByTestId('image-generation-toggle');
  await gate(toggle, 'available');
  await toggle.click();
  await p.getByTestId('composer-input').fill('A lighthouse at dawn');
  await p.getByTestId('message-assistant').first().locator('img').waitFor();
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  const boxes = {};
  for (const id of ['attach-button', 'web-search-toggle', 'deep-search-toggle', 'image-generation-toggle', 'model-select', 'send-button']) {
    const locator = p.getByTestId(id);
    if ((await locator.count()) === 0) continue;
    const box = await locator.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `${id} is at ${JSON.stringify(box)}`);
    boxes[id] = box;
  }
  // The image toggle has a name even when only its icon shows.
  assert.equal(await p.getByRole('button', { name: 'Create image' }).getAttribute('data-testid'), 'image-generation-toggle');
  const download = p.getByTestId('message-image-download').first();
  const box = await download.boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `the download link is at ${JSON.stringify(box)}`);
  await p.screenshot({ path: join(ARTIFACTS, 'image-generation-360.png'), fullPage: true });
  await phone.close();
});

test('a free user pressing "Create image" is told it is a premium feature, with the way to upgrade', async () => {
  const free = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  try {
    const p = await free.newPage();
    await p.goto('/');
    await dismissCookies(p);
    await registerOverApi(p, server, { name: 'Fred', email: 'fred@example.com', password: PASSWORD });
    await p.goto('/chat');
    const toggle = p.getByTestId('image-generation-toggle');
    await gate(toggle, 'premium');
    await toggle.click();
    const notice = p.getByTestId('chat-notice');
    await notice.waitFor();
    assert.match(await notice.innerText(), /Image generation is a premium feature/);
    assert.equal(await notice.getByRole('link', { name: 'Upgrade plan' }).getAttribute('href'), '/settings#subscription');
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');

    // The plan cards sell image generation as working on the paid plans, never as coming soon.
    await p.goto('/settings#subscription');
    const base = p.getByTestId('plan-card-base');
    await base.waitFor();
    assert.match(await base.getByRole('list', { name: 'Features' }).innerText(), /Image generation/);
    assert.match(await base.innerText(), /Image generations\s*\d+ \/ day/);
    const soon = base.getByTestId('coming-soon-base');
    if (await soon.count()) assert.doesNotMatch(await soon.innerText(), /Image generation/);
  } finally {
    await free.close();
  }
});
