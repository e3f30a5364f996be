// End-to-end (issue 31): search, pin and archive, share links, export and import, in
// Debian's headless Chromium against the real chat-server (demo model: each answer starts
// "You said: *<the question>*."). Screenshots of every new screen at 360 and 1280 px, in
// en-US and hu-HU, go to e2e/artifacts/find-keep-share/ (or SHOTS_DIR when set), and
// axe-core checks each of them.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertAccessible } from './a11y.mjs';
import { startServer } from './server.mjs';
import { dismissCookies, launchChromium, registerOverApi } from './flows.mjs';
import { readZip } from './unzip.mjs';

const SHOTS = process.env.SHOTS_DIR ?? join(import.meta.dirname, 'artifacts', 'find-keep-share');
const NAME = 'Nora';
const EMAIL = 'nora@example.com';
const PASSWORD = 'secret12';
const ANSWER_MS = 30_000;

let server;
let browser;
let context;
let one;
let two;
/** The conversation with two versions of its question, and the second one. */
let lighthouseId;
let tidesId;
let shareUrl;

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({
    baseURL: server.url,
    locale: 'en-US',
    acceptDownloads: true,
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  one = await context.newPage();
  mkdirSync(SHOTS, { recursive: true });
  await one.goto('/');
  await dismissCookies(one);
  await registerOverApi(one, server, { name: NAME, email: EMAIL, password: PASSWORD });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const question = (page, n = 0) => page.getByTestId('message-user').nth(n);
const answer = (page, n = 0) => page.getByTestId('message-assistant').nth(n);
const row = (page, id) => page.locator(`[data-testid="conversation-item"][data-conversation-id="${id}"]`);

async function completed(message) {
  await message.and(message.page().locator('[data-status="complete"]')).waitFor({ timeout: ANSWER_MS });
}

/** Asks in a new chat and waits for the answer; resolves with the conversation's id. */
async function ask(page, text) {
  await page.goto('/chat');
  await page.getByTestId('composer-input').fill(text);
  await page.getByTestId('send-button').click();
  await page.waitForURL(/\/chat\/.+/);
  await completed(answer(page));
  return new URL(page.url()).pathname.split('/').pop();
}

/** Clicks once the element has stopped moving (lists shift as answers stream). */
async function press(control) {
  await control.scrollIntoViewIfNeeded();
  await control.page().evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await control.click();
}

async function rowMenu(page, id, item) {
  await press(row(page, id).getByTestId('conversation-menu-button'));
  await page.getByTestId('conversation-menu').getByTestId(item).click();
}

/** The session token of a page's context, for calls made as the app makes them. */
async function apiCall(page, method, path, body) {
  return page.evaluate(
    async ([method, path, body]) => {
      const token = document.cookie.split('; ').find((c) => c.startsWith('token='))?.slice(6);
      const response = await fetch(`/api${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: await response.json().catch(() => null) };
    },
    [method, path, body],
  );
}

test('search finds a question on a branch that is not shown, opens it there and scrolls to it', async () => {
  lighthouseId = await ask(one, 'What is a lantern room?');
  // A second version of the question: the first one is no longer on the branch shown.
  await question(one).hover();
  await press(question(one).getByRole('button', { name: 'Edit message' }));
  await one.getByTestId('edit-input').fill('Who keeps a lighthouse?');
  await one.getByTestId('edit-box').getByRole('button', { name: 'Send' }).click();
  await question(one).getByTestId('version-label').filter({ hasText: '2 / 2' }).waitFor({ timeout: ANSWER_MS });
  await completed(answer(one));
  tidesId = await ask(one, 'Tell me about tides');

  // Ctrl+K focuses the search from anywhere on the chat page.
  await one.keyboard.press('Control+k');
  const search = one.getByTestId('conversation-search');
  assert.equal(await search.evaluate((el) => el === document.activeElement), true);
  await search.pressSequentially('lantern', { delay: 30 });
  const hit = one.getByTestId('search-hit').filter({ has: one.locator('mark') }).first();
  await hit.waitFor();
  assert.equal(await hit.getAttribute('data-conversation-id'), lighthouseId);
  assert.match((await hit.locator('mark').first().innerText()).toLowerCase(), /lantern/);
  // The combobox follows the arrows; Enter opens the hit.
  await search.press('ArrowDown');
  assert.ok(await search.getAttribute('aria-activedescendant'));
  await search.press('Enter');
  await one.waitForURL(`**/chat/${lighthouseId}`);
  await question(one).getByTestId('version-label').filter({ hasText: '1 / 2' }).waitFor({ timeout: 10_000 });
  assert.match(await question(one).innerText(), /What is a lantern room\?/);
  // Scrolled to and marked for a moment.
  await one.locator('[data-found="true"]').waitFor({ timeout: 5000 });
  // The search cleared, the lists are back.
  assert.equal(await search.inputValue(), '');
  await one.getByTestId('conversation-list').waitFor();
});

test('a search with no hit says so; the archived hit is marked', async () => {
  const search = one.getByTestId('conversation-search');
  await search.fill('xylophonequartz');
  await one.getByTestId('search-empty').waitFor();
  await search.press('Escape');
  assert.equal(await search.inputValue(), '');
});

test('pin and archive in one tab are seen in another, and the archived view brings it back', async () => {
  two = await context.newPage();
  await two.goto('/chat');
  await row(two, tidesId).waitFor();
  await one.bringToFront();
  await rowMenu(one, tidesId, 'pin-conversation');
  // Pinned on top, in both tabs.
  await two.getByTestId('pinned-list').locator(`[data-conversation-id="${tidesId}"]`).waitFor({ timeout: 10_000 });
  await one.getByTestId('pinned-list').locator(`[data-conversation-id="${tidesId}"]`).waitFor();
  assert.equal(await two.getByTestId('conversation-item').first().getAttribute('data-conversation-id'), tidesId);

  await rowMenu(one, tidesId, 'archive-conversation');
  await row(one, tidesId).waitFor({ state: 'detached' });
  await row(two, tidesId).waitFor({ state: 'detached', timeout: 10_000 });
  // Search still finds it, marked archived.
  await two.bringToFront();
  await two.getByTestId('conversation-search').fill('tides');
  const archivedHit = two.locator(`[data-testid="search-hit"][data-conversation-id="${tidesId}"]`).first();
  await archivedHit.waitFor();
  assert.match(await archivedHit.innerText(), /Archived/);
  await two.getByTestId('conversation-search').press('Escape');

  await two.getByTestId('open-archived').click();
  const view = two.getByRole('dialog', { name: 'Archived conversations' });
  const item = view.locator(`[data-testid="archived-item"][data-conversation-id="${tidesId}"]`);
  await item.waitFor();
  await item.getByTestId('unarchive-conversation').click();
  await item.waitFor({ state: 'detached' });
  await row(one, tidesId).waitFor({ timeout: 10_000 });
  await row(two, tidesId).waitFor();
  await view.getByRole('button', { name: 'Close' }).last().click();
});

test('a share link opens signed out, shows the branch shared, and continues after signing in', async () => {
  await one.bringToFront();
  await one.goto(`/chat/${lighthouseId}`);
  // The branch shown now is the first question's (the search picked it).
  await question(one).getByTestId('version-label').filter({ hasText: '1 / 2' }).waitFor();
  await one.getByTestId('share-button').click();
  const dialog = one.getByRole('dialog', { name: 'Share a link' });
  await dialog.getByLabel('Show my name on the shared page').check();
  await dialog.getByRole('button', { name: 'Create link' }).click();
  const url = dialog.getByTestId('share-url');
  await url.waitFor();
  shareUrl = await url.inputValue();
  assert.match(shareUrl, /\/share\/[A-Za-z0-9_-]{22,}$/);
  await dialog.getByTestId('share-copy').click();
  assert.equal(await one.evaluate(() => navigator.clipboard.readText()), shareUrl);
  await dialog.getByRole('button', { name: 'Close' }).last().click();

  const guestContext = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  const guest = await guestContext.newPage();
  await guest.goto(new URL(shareUrl).pathname);
  await guest.getByTestId('shared-page').waitFor();
  assert.equal(new URL(guest.url()).pathname, new URL(shareUrl).pathname, 'the guard lets a guest stay');
  assert.match(await guest.getByTestId('shared-page').innerText(), /Shared by Nora/);
  assert.match(await guest.getByTestId('shared-message-user').first().innerText(), /What is a lantern room\?/);
  assert.match(await guest.getByTestId('shared-message-assistant').first().innerText(), /You said: What is a lantern room\?/);
  assert.doesNotMatch(await guest.getByTestId('shared-page').innerText(), /Who keeps a lighthouse/);
  // The same Markdown as the chat: the answer's emphasis is an <em>.
  assert.ok((await guest.getByTestId('shared-message-assistant').first().locator('em').count()) > 0);

  // Continue: a guest logs in first, then the copy opens.
  await dismissCookies(guest);
  await guest.getByTestId('shared-continue').click();
  const login = guest.getByRole('dialog', { name: 'Log in' });
  await login.getByLabel('Email').fill(EMAIL);
  await login.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await login.getByRole('button', { name: 'Log in' }).click();
  await guest.waitForURL(/\/chat\/.+/, { timeout: 15_000 });
  const copyId = new URL(guest.url()).pathname.split('/').pop();
  assert.notEqual(copyId, lighthouseId);
  await completed(answer(guest));
  assert.match(await question(guest).innerText(), /What is a lantern room\?/);

  // Revoked in Settings: the link answers "not found" at once.
  await one.goto('/settings#shared-links');
  const link = one.getByTestId('shared-link').first();
  await link.waitFor();
  await link.getByTestId('revoke-share').click();
  await link.waitFor({ state: 'detached' });
  await guestContext.clearCookies();
  await guest.goto(new URL(shareUrl).pathname);
  await guest.getByTestId('shared-not-found').waitFor();
  await guestContext.close();
});

test('the export is downloaded with its progress, and holds the conversations', async () => {
  await one.goto('/settings');
  const downloading = one.waitForEvent('download');
  await one.getByTestId('export-data').click();
  const download = await downloading;
  assert.match(download.suggestedFilename(), /^chat-export-\d{4}-\d{2}-\d{2}\.zip$/);
  const files = readZip(readFileSync(await download.path()));
  const json = files.get('conversations.json');
  assert.ok(json, `conversations.json in ${[...files.keys()].join(', ')}`);
  const text = json.toString('utf8');
  // Every branch: both versions of the question.
  assert.match(text, /What is a lantern room\?/);
  assert.match(text, /Who keeps a lighthouse\?/);
  assert.ok([...files.keys()].some((name) => name.endsWith('.md')), 'a Markdown file per conversation');
  await one.getByTestId('export-status').filter({ hasText: 'The export was downloaded.' }).waitFor();
});

test('a ChatGPT conversations.json is imported, branch and all, and listed', async () => {
  const node = (id, parent, children, role, text) => ({
    id,
    parent,
    children,
    message: role ? { id, author: { role }, content: { content_type: 'text', parts: [text] }, create_time: 1_700_000_000 } : null,
  });
  const chatgpt = [
    {
      title: 'Imported about owls',
      create_time: 1_700_000_000,
      update_time: 1_700_000_100,
      current_node: 'a2',
      mapping: {
        root: node('root', null, ['q1'], null),
        q1: node('q1', 'root', ['a1', 'a2'], 'user', 'Do owls sleep?'),
        a1: node('a1', 'q1', [], 'assistant', 'Yes, by day.'),
        a2: node('a2', 'q1', [], 'assistant', 'Most owls sleep during the day.'),
      },
    },
  ];
  await one.goto('/settings');
  await one.getByTestId('import-file').setInputFiles({
    name: 'conversations.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(chatgpt)),
  });
  await one.getByTestId('import-status').filter({ hasText: /Imported 1 conversation with 3 messages/ }).waitFor({ timeout: 15_000 });
  // A file that is no export is refused in words, and nothing changes.
  await one.getByTestId('import-file').setInputFiles({ name: 'conversations.json', mimeType: 'application/json', buffer: Buffer.from('{"nope": 1}') });
  await one.getByTestId('data-section').getByRole('alert').waitFor();

  await one.goto('/chat');
  const imported = one.getByTestId('conversation-item').filter({ hasText: 'Imported about owls' });
  await imported.waitFor({ timeout: 10_000 });
  await imported.getByRole('link').click();
  await answer(one).filter({ hasText: 'Most owls sleep during the day.' }).waitFor();
  await answer(one).getByTestId('version-label').filter({ hasText: '2 / 2' }).waitFor();
});

/** A context of the same user at `width` px in `language` (the account's language rules once signed in). */
async function userAt(width, language) {
  assert.equal((await apiCall(one, 'PUT', '/settings', { language })).status, 200);
  const { cookies, origins } = await context.storageState();
  const ctx = await browser.newContext({ baseURL: server.url, viewport: { width, height: width < 500 ? 740 : 800 }, locale: language });
  await ctx.addCookies(cookies);
  const items = origins.find((o) => o.origin === server.url)?.localStorage ?? [];
  await ctx.addInitScript((stored) => {
    for (const { name, value } of stored) if (localStorage.getItem(name) === null) localStorage.setItem(name, value);
  }, items);
  return ctx;
}

async function noSidewaysScroll(page, what) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${what}: the page scrolls sideways by ${overflow}px`);
}

for (const language of ['en-US', 'hu-HU']) {
  for (const width of [360, 1280]) {
    test(`screens at ${width} px in ${language}`, async () => {
      const share = await apiCall(one, 'POST', `/conversations/${lighthouseId}/shares`, { showName: true });
      assert.ok(share.status >= 200 && share.status < 300, JSON.stringify(share.body));
      const ctx = await userAt(width, language);
      const page = await ctx.newPage();
      const shot = (name) => page.screenshot({ path: join(SHOTS, `${name}-${width}-${language}.png`) });
      const phone = width < 500;
      const openDrawer = async () => {
        if (phone) await page.locator('header button[aria-controls]').first().click();
      };
      await page.goto(`/chat/${lighthouseId}`);
      await completed(answer(page));

      await openDrawer();
      await page.getByTestId('conversation-search').fill('lighthouse');
      await page.getByTestId('search-hit').first().waitFor();
      await shot('search');
      await noSidewaysScroll(page, 'search');
      await assertAccessible(page, ['[role="search"]'], 'search');
      await page.getByTestId('conversation-search').press('Escape');

      await press(row(page, tidesId).getByTestId('conversation-menu-button'));
      await page.getByTestId('conversation-menu').waitFor();
      const menu = await page.getByTestId('conversation-menu').boundingBox();
      assert.ok(menu && menu.x >= 0 && menu.x + menu.width <= width, `the menu at ${JSON.stringify(menu)}`);
      await shot('row-menu');
      await assertAccessible(page, ['[data-testid="conversation-list"]'], 'row menu');
      await page.keyboard.press('Escape');

      await rowMenu(page, tidesId, 'archive-conversation');
      await page.getByTestId('open-archived').click();
      await page.getByTestId('archived-item').first().waitFor();
      await shot('archived');
      await assertAccessible(page, ['[data-testid="archived-view"]'], 'archived view');
      await page.getByTestId('unarchive-conversation').first().click();
      await page.getByTestId('archived-item').first().waitFor({ state: 'detached' });
      await page.keyboard.press('Escape');

      if (phone) await page.goto(`/chat/${lighthouseId}`);
      await page.getByTestId('share-button').click();
      await page.getByTestId('share-create').click();
      await page.getByTestId('share-url').waitFor();
      await shot('share-dialog');
      await assertAccessible(page, ['[data-testid="share-dialog"]'], 'share dialog');
      await noSidewaysScroll(page, 'share dialog');
      await page.keyboard.press('Escape');

      await page.goto(new URL(share.body.data.url).pathname);
      await page.getByTestId('shared-page').waitFor();
      await shot('shared-page');
      // Code blocks' highlighting colours are the chat's (checked with the chat).
      await assertAccessible(page, ['[data-testid="shared-page"] header', '[data-testid="shared-page"] footer', '[data-testid="shared-message-user"]'], 'shared page');
      await noSidewaysScroll(page, 'shared page');

      await page.goto('/settings#account');
      await page.getByTestId('data-section').waitFor();
      await page.getByTestId('data-section').scrollIntoViewIfNeeded();
      await shot('settings-account');
      await assertAccessible(page, ['#account'], 'settings account');
      await page.goto('/settings#shared-links');
      await page.getByTestId('shared-link').first().waitFor();
      await shot('settings-shared-links');
      await assertAccessible(page, ['#shared-links'], 'settings shared links');
      await noSidewaysScroll(page, 'settings');
      await ctx.close();
    });
  }
}
