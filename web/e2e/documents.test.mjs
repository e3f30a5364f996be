// End-to-end: document attachments, from the pick through the server's reading to an
// answer that quotes them and names its sources, and to a second tab, in Debian's headless
// Chromium against the real chat-server (see app.test.mjs). The demo model quotes the
// best excerpt it was given, so the answer shows what retrieval found.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { registerThroughDialog, registerOverApi, phoneSignedInAs, launchChromium, dismissCookies } from './flows.mjs';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');
const PASSWORD = 'secret12';
const SECRET = 'The secret harbour code is LIGHTHOUSE-42.';

/** A Markdown note: the secret in the middle of paragraphs about other things. */
function notes() {
  const filler = [
    'The lighthouse keeper walks the shore every morning and counts the boats in the bay.',
    'Fishing nets are mended in the old shed behind the market, where the gulls gather.',
    'In winter the ferry runs twice a day, and the timetable is pinned to the café door.',
    'The town council meets on Thursdays to discuss the repair of the northern pier.',
    'Tourists come in summer for the cliffs, the seafood and the long sandy beaches.',
  ];
  return ['# Harbour notes', '', ...filler.slice(0, 3).flatMap((p) => [p, '']), SECRET, '', ...filler.slice(3).flatMap((p) => [p, ''])].join('\n');
}

let server;
let browser;
let context;
let page;
let dir;

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  page = await context.newPage();
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'chat-e2e-docs-'));
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, { name: 'Dora', email: 'dora@example.com', password: PASSWORD });
  // The operator's command: a paid plan without a payment, before the first socket.
  await server.cli(['users', 'set-plan', 'dora@example.com', 'plus']);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const documentChip = (p) => p.locator('[data-testid="attachment-preview"][data-kind="document"]');

/**
 * Records, from now on, each state the composer's document chip shows with whether the
 * send button was enabled then: the server may read a small file faster than a test can look.
 */
async function recordChipStates(p) {
  await p.evaluate(() => {
    window.chipStates = [];
    const look = () => {
      const chip = document.querySelector('[data-testid="attachment-preview"][data-kind="document"]');
      const send = document.querySelector('[data-testid="send-button"]');
      if (!chip) return;
      const state = {
        status: chip.getAttribute('data-status'),
        progress: chip.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow') ?? null,
        sendEnabled: send ? !send.disabled : null,
      };
      const last = window.chipStates.at(-1);
      if (!last || last.status !== state.status || last.progress !== state.progress) window.chipStates.push(state);
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
}

test('a Plus user attaches a document, waits while it is read, asks about it; the answer quotes it and names it, in a second tab too', async () => {
  const path = join(dir, 'notes.md');
  writeFileSync(path, notes());
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  // Something typed first: only the document's reading holds the send back.
  await page.getByTestId('composer-input').fill('What is the secret harbour code?');
  await recordChipStates(page);
  await page.getByTestId('attach-button').click();
  const item = page.getByTestId('attach-document');
  assert.equal(await item.getAttribute('data-gate'), 'available');
  const chooser = page.waitForEvent('filechooser');
  await item.click();
  const picker = await chooser;
  assert.match(await picker.element().getAttribute('accept'), /^\.pdf,\.docx,\.txt,\.md,\.csv,/);
  await picker.setFiles(path);

  const chip = documentChip(page);
  await chip.and(page.locator('[data-status="ready"]')).waitFor({ timeout: 60_000 });
  const states = await page.evaluate(() => window.chipStates);
  assert.ok(states.length > 0, 'the chip was never seen');
  for (const state of states.filter((s) => s.status !== 'ready')) {
    assert.equal(state.sendEnabled, false, `send enabled while ${JSON.stringify(state)}`);
  }
  assert.ok(states.some((s) => s.status === 'uploading' || s.status === 'processing'), JSON.stringify(states));
  assert.match(await chip.innerText(), /notes\.md/);
  const fileId = await chip.getAttribute('data-file-id');
  assert.ok(fileId);

  await page.getByTestId('send-button').click();
  await chip.waitFor({ state: 'detached' });
  await page.waitForURL(/\/chat\/.+/);

  const asked = page.getByTestId('message-user').last();
  const sentDoc = asked.getByTestId('message-document');
  await sentDoc.waitFor();
  assert.match(await sentDoc.innerText(), /notes\.md/);
  assert.equal(await sentDoc.getAttribute('href'), `/api/files/${fileId}`);
  assert.equal(await sentDoc.getAttribute('target'), '_blank');
  // The link serves the original, by the cookie alone.
  const original = await page.evaluate(async (href) => {
    const response = await fetch(href, { headers: {} });
    return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
  }, `/api/files/${fileId}`);
  assert.equal(original.status, 200);
  assert.ok(original.text.includes(SECRET), 'the original is served as uploaded');

  const reply = page.getByTestId('message-assistant').last();
  await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 60_000 });
  assert.match(await reply.innerText(), /LIGHTHOUSE-42/);
  const sources = reply.getByTestId('message-sources');
  assert.equal(await sources.innerText(), 'Sources: notes.md');
  assert.equal(await sources.getByRole('link').getAttribute('href'), `/api/files/${fileId}`);

  // A second tab loads the conversation: the document on the question, the sources on the answer.
  const second = await context.newPage();
  await second.goto(page.url());
  const mirroredDoc = second.getByTestId('message-user').first().getByTestId('message-document');
  await mirroredDoc.waitFor();
  assert.match(await mirroredDoc.innerText(), /notes\.md/);
  const mirroredSources = second.getByTestId('message-assistant').first().getByTestId('message-sources');
  await mirroredSources.waitFor();
  assert.equal(await mirroredSources.innerText(), 'Sources: notes.md');
  await second.close();
});

test('a document the server cannot read says so in the composer, and cannot be sent', async () => {
  const path = join(dir, 'broken.pdf');
  // A PDF header and nothing a reader could use.
  writeFileSync(path, '%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer <<>>\n%%EOF garbage');
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  await page.getByTestId('attach-document-input').setInputFiles(path);
  const error = page.getByTestId('attachment-error');
  await error.waitFor({ timeout: 60_000 });
  // Refused at the upload (`file_unreadable`, the server's words) or failed while read (ours).
  assert.match(await error.innerText(), /^broken\.pdf could not be attached: .+/);
  assert.equal(await documentChip(page).getAttribute('data-status'), 'error');
  assert.equal(await page.getByTestId('send-button').isDisabled(), true);
  await page.getByRole('button', { name: 'Remove broken.pdf' }).click();
  assert.equal(await documentChip(page).count(), 0);
});

test('a document chip in the composer fits 360 px (screenshot kept)', async () => {
  const path = join(dir, 'a-rather-long-document-name-for-a-small-screen.txt');
  writeFileSync(path, `${SECRET}\n\nNothing else of note.\n`);
  const { phone, page: p } = await phoneSignedInAs(browser, context, server);
  await p.goto('/chat');
  await p.getByTestId('composer-input').waitFor();
  await p.getByTestId('attach-document-input').setInputFiles(path);
  await documentChip(p).and(p.locator('[data-status="ready"]')).waitFor({ timeout: 60_000 });
  await p.getByTestId('composer-input').fill('What is in it?');
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  const box = await documentChip(p).boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `the chip is at ${JSON.stringify(box)}`);
  await p.screenshot({ path: join(ARTIFACTS, 'documents-360.png'), fullPage: true });
  await p.getByTestId('attachment-remove').click();
  await phone.close();
});

test('a free user choosing Document is told it is a premium feature, and the server refuses one too', async () => {
  const free = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  const p = await free.newPage();
  await p.goto('/');
  await dismissCookies(p);
  await registerThroughDialog(p, server, { name: 'Fred', email: 'fred@example.com', password: PASSWORD });
  await p.goto('/chat');
  await p.getByTestId('composer-input').waitFor();
  await p.getByTestId('attach-button').click();
  const item = p.getByTestId('attach-document');
  assert.equal(await item.getAttribute('data-gate'), 'premium');
  await item.click();
  const notice = p.getByTestId('chat-notice');
  await notice.waitFor();
  assert.match(await notice.innerText(), /Document upload is a premium feature/);
  assert.equal(await notice.getByRole('link', { name: 'Upgrade plan' }).getAttribute('href'), '/settings#subscription');

  // A document sent anyway (not through the menu) gets the same words from the server.
  const refused = await p.evaluate(async (text) => {
    const body = new FormData();
    body.append('file', new File([text], 'notes.txt', { type: 'text/plain' }));
    const response = await fetch('/api/files', { method: 'POST', body });
    return { status: response.status, body: await response.json() };
  }, SECRET);
  assert.equal(refused.status, 403);
  assert.equal(refused.body.code, 'premium_required');
  assert.equal(refused.body.message, 'Document upload is a premium feature');
  await free.close();
});
