// End-to-end: projects in the sidebar, in Debian's headless Chromium against the real
// chat-server (see app.test.mjs): a Plus user makes a project with instructions, starts a
// chat in it (the demo model says which instructions it was given), moves conversations
// out and in, adds a document the project's answers read, and deletes projects with and
// without their conversations; a second tab of the same user follows all of it live; the
// sidebar works at 360 px; a free user is told projects are a premium feature.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { dismissCookies, launchChromium, phoneSignedInAs, registerOverApi, registerThroughDialog } from './flows.mjs';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');
const PASSWORD = 'secret12';
const INSTRUCTIONS = 'Answer as a gardener.\nKeep it short.';
const SECRET = 'The shade rose of the north bed is called MIDNIGHT-7.';

let server;
let browser;
let context;
let page;
/** The same user's second tab, open from the start: everything reaches it by frames. */
let second;
let dir;
let gardenId;
/** The conversation started in the project. */
let firstChatId;

const projectItem = (p, name) => p.locator('[data-testid="project-item"]', { hasText: name });
const conversationRow = (p, id) => p.locator(`[data-testid="conversation-item"][data-conversation-id="${id}"]`);
const projectRows = (p) => p.getByTestId('conversation-list').getByTestId('conversation-item');

/** The sidebar's list heading says which list it shows (its text; CSS shows it in capitals). */
async function listHeading(p) {
  return (await p.getByTestId('conversation-list-heading').textContent()).trim();
}

/** Waits until `read()` gives `expected` (a frame or a fetch may still be on its way). */
async function eventually(read, expected, what, timeout = 10_000) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    last = await read();
    if (last === expected) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(last, expected, what);
}

/**
 * "New chat in project" from the project's panel; resolves once the project's new chat is
 * shown (the URL changes a moment before its view replaces the last one).
 */
async function newChatIn(p, name) {
  await p.getByTestId('project-panel').getByTestId('new-chat-in-project').click();
  await p.waitForURL(/\/chat\?project=/);
  await eventually(() => p.getByTestId('conversation-title').innerText(), `New chat in ${name}`, 'the new chat names its project');
}

/** Sends a message from the composer and waits for the answer to end; resolves with its text. */
async function ask(p, text) {
  await p.getByTestId('composer-input').fill(text);
  await p.getByTestId('send-button').click();
  await p.waitForURL(/\/chat\/[0-9a-f-]+$/);
  const reply = p.getByTestId('message-assistant').last();
  await reply.and(p.locator('[data-status="complete"]')).waitFor({ timeout: 60_000 });
  return reply.innerText();
}

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  page = await context.newPage();
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'chat-e2e-projects-'));
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, { name: 'Petra', email: 'petra@example.com', password: PASSWORD });
  // The operator's command: a paid plan without a payment, before the first socket.
  await server.cli(['users', 'set-plan', 'petra@example.com', 'plus']);
  await page.goto('/chat');
  second = await context.newPage();
  await second.goto('/chat');
  for (const p of [page, second]) {
    await p.locator('[data-testid="project-section"][data-gate="available"]').waitFor();
  }
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a Plus user creates a project with instructions and starts a chat in it; the answer follows them; the other tab sees both live', async () => {
  assert.equal(await page.getByTestId('project-list').count(), 0, 'no projects yet');
  await page.getByTestId('new-project-button').click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  // The name is checked before anything is sent.
  await dialog.getByTestId('project-save').click();
  await dialog.getByText('Name is required').waitFor();
  await dialog.getByLabel('Name').fill('Garden');
  await dialog.getByTestId('project-instructions-input').fill(INSTRUCTIONS);
  await dialog.getByTestId('project-save').click();
  await dialog.waitFor({ state: 'hidden' });

  // The new project is chosen: its panel and its (empty) conversations.
  const panel = page.getByTestId('project-panel');
  await panel.waitFor();
  gardenId = await panel.getAttribute('data-project-id');
  assert.ok(gardenId);
  assert.equal(await panel.getByTestId('project-panel-name').innerText(), 'Garden');
  assert.equal(await panel.getByTestId('project-instructions').innerText(), INSTRUCTIONS);
  assert.equal(await listHeading(page), 'Conversations in Garden');
  assert.equal(await projectItem(page, 'Garden').getAttribute('aria-pressed'), 'true');

  // The other tab was told: the project is listed there, and can be opened.
  await projectItem(second, 'Garden').waitFor();
  assert.equal(await projectItem(second, 'Garden').getByTestId('project-count').innerText(), '0');
  await projectItem(second, 'Garden').click();
  await second.getByTestId('project-panel').waitFor();
  assert.equal(await listHeading(second), 'Conversations in Garden');
  assert.equal(await projectRows(second).count(), 0);

  await newChatIn(page, 'Garden');
  assert.ok(page.url().endsWith(`/chat?project=${gardenId}`), page.url());
  assert.equal(
    await page.getByTestId('new-chat-hint').innerText(),
    'Answers here follow the instructions of Garden and read its documents.',
  );
  const answer = await ask(page, 'Which roses grow in the shade?');
  assert.match(answer, /^Assistant:\s*Following the instructions of Garden: «Answer as a gardener\.»\./);
  firstChatId = page.url().split('/chat/')[1];
  // Its header names the project (the name shown, "In project Garden" read out).
  assert.equal(await page.getByTestId('conversation-project').getAttribute('title'), 'In project Garden');
  assert.match(await page.getByTestId('conversation-project').innerText(), /Garden$/);
  // It is in the project's list here…
  await conversationRow(page, firstChatId).waitFor();
  assert.equal(await conversationRow(page, firstChatId).getAttribute('data-project-id'), gardenId);

  // …and there, with the project's count, live.
  await conversationRow(second, firstChatId).waitFor();
  await eventually(() => projectItem(second, 'Garden').getByTestId('project-count').innerText(), '1', 'the count in the other tab');
  await eventually(() => projectItem(page, 'Garden').getByTestId('project-count').innerText(), '1', 'the count in this tab');
  // Opening it there shows the same answer.
  await conversationRow(second, firstChatId).getByRole('link').click();
  const mirrored = second.getByTestId('message-assistant').first();
  await mirrored.and(second.locator('[data-status="complete"]')).waitFor();
  assert.match(await mirrored.innerText(), /Following the instructions of Garden/);
});

test('a conversation moves out of the project and back in, in both tabs', async () => {
  // Out: "No project" from its row's menu in the project's list.
  await conversationRow(page, firstChatId).getByTestId('conversation-menu-button').click();
  await page.getByTestId('conversation-menu').getByTestId('move-conversation').click();
  let dialog = page.getByRole('dialog', { name: 'Move to project' });
  const options = dialog.getByTestId('move-option');
  assert.deepEqual(await options.evaluateAll((els) => els.map((e) => [e.dataset.projectId, e.getAttribute('aria-current')])), [
    ['', null],
    [gardenId, 'true'],
  ]);
  await dialog.locator('[data-testid="move-option"][data-project-id=""]').click();
  await dialog.waitFor({ state: 'hidden' });
  await conversationRow(page, firstChatId).waitFor({ state: 'detached' });
  await page.getByText('No conversations in this project yet.').waitFor();
  await conversationRow(second, firstChatId).waitFor({ state: 'detached' });
  await eventually(() => projectItem(second, 'Garden').getByTestId('project-count').innerText(), '0', 'the count after moving out');
  // The conversation's own header no longer names the project.
  await second.getByTestId('conversation-project').waitFor({ state: 'detached' });

  // In again, from the list of all conversations.
  await page.getByTestId('project-close').click();
  assert.equal(await listHeading(page), 'Conversations');
  const row = conversationRow(page, firstChatId);
  assert.equal(await row.getAttribute('data-project-id'), null);
  await row.getByTestId('conversation-menu-button').click();
  await page.getByTestId('conversation-menu').getByTestId('move-conversation').click();
  dialog = page.getByRole('dialog', { name: 'Move to project' });
  await dialog.locator(`[data-testid="move-option"][data-project-id="${gardenId}"]`).click();
  await dialog.waitFor({ state: 'hidden' });
  await eventually(() => row.getAttribute('data-project-id'), gardenId, 'the row knows its project');
  await conversationRow(second, firstChatId).waitFor();
  await eventually(() => projectItem(second, 'Garden').getByTestId('project-count').innerText(), '1', 'the count after moving in');
  await second.getByTestId('conversation-project').waitFor();
});

test('a project document is uploaded and read, shown in both tabs, and answers in the project draw on it', async () => {
  await projectItem(page, 'Garden').click();
  const panel = page.getByTestId('project-panel');
  await panel.waitFor();
  assert.equal(await panel.getByTestId('project-document-count').innerText(), '0 of 20');
  const path = join(dir, 'roses.md');
  writeFileSync(path, ['# Roses', '', 'Climbing roses want a sunny wall.', '', SECRET, '', 'Prune them in early spring.', ''].join('\n'));
  await panel.getByTestId('project-document-input').setInputFiles(path);
  const doc = panel.getByTestId('project-document');
  await doc.and(page.locator('[data-status="ready"]')).waitFor({ timeout: 60_000 });
  assert.match(await doc.innerText(), /roses\.md/);
  assert.equal(await panel.getByTestId('project-document-count').innerText(), '1 of 20');
  assert.equal(await panel.getByTestId('project-upload').count(), 0);

  // The other tab shows it too (project.updated, then the project read again).
  const mirrored = second.getByTestId('project-panel').getByTestId('project-document');
  await mirrored.and(second.locator('[data-status="ready"]')).waitFor({ timeout: 20_000 });

  // A new chat in the project reads it, though nothing was attached to the message.
  await newChatIn(page, 'Garden');
  const answer = await ask(page, 'What is the shade rose of the north bed called?');
  assert.match(answer, /MIDNIGHT-7/);
  assert.match(answer, /Following the instructions of Garden/);
  const sources = page.getByTestId('message-assistant').last().getByTestId('message-sources');
  assert.equal(await sources.innerText(), 'Sources: roses.md');
  await page.screenshot({ path: join(ARTIFACTS, 'projects-desktop.png') });

  // A document that is no document is refused before uploading.
  const image = join(dir, 'not-a-document.png');
  writeFileSync(image, 'not really an image');
  await panel.getByTestId('project-document-input').setInputFiles(image);
  const refused = panel.getByTestId('project-upload-error');
  await refused.waitFor();
  assert.match(await refused.innerText(), /^not-a-document\.png could not be added: Only documents/);
  await panel.getByTestId('project-upload-dismiss').click();
  assert.equal(await panel.getByTestId('project-upload').count(), 0);
});

test('a project’s document is removed, in both tabs', async () => {
  const panel = page.getByTestId('project-panel');
  const path = join(dir, 'old-notes.txt');
  writeFileSync(path, 'Old notes about tulips.\n');
  await panel.getByTestId('project-document-input').setInputFiles(path);
  const doc = panel.locator('[data-testid="project-document"]', { hasText: 'old-notes.txt' });
  await doc.and(page.locator('[data-status="ready"]')).waitFor({ timeout: 60_000 });
  // The other tab, showing the project too, lists it.
  const otherPanel = second.getByTestId('project-panel');
  const mirrored = otherPanel.locator('[data-testid="project-document"]', { hasText: 'old-notes.txt' });
  await mirrored.waitFor({ timeout: 20_000 });
  assert.equal(await otherPanel.getByTestId('project-document-count').innerText(), '2 of 20');
  const fileId = await doc.getAttribute('data-file-id');
  await doc.getByRole('button', { name: 'Remove old-notes.txt' }).click();
  await doc.waitFor({ state: 'detached' });
  assert.equal(await panel.getByTestId('project-document-count').innerText(), '1 of 20');
  // The other tab is told (project.updated) and reads the project's documents again.
  await mirrored.waitFor({ state: 'detached', timeout: 10_000 });
  assert.equal(await otherPanel.getByTestId('project-document-count').innerText(), '1 of 20');
  // Gone on the server too: the project lists only the other document.
  const listed = await page.evaluate(async (id) => (await (await fetch(`/api/projects/${id}`)).json()).data.files.map((f) => f._id), gardenId);
  assert.equal(listed.length, 1);
  assert.ok(!listed.includes(fileId));
});

test('deleting a project keeps its conversations, or deletes them too when asked', async () => {
  const chats = await page.evaluate(
    async (id) => (await (await fetch(`/api/conversations?projectId=${id}`)).json()).data.map((c) => c._id),
    gardenId,
  );
  assert.equal(chats.length, 2);
  // Chosen already (the last test's chat started there); a press would unchoose it.
  if ((await projectItem(page, 'Garden').getAttribute('aria-pressed')) !== 'true') await projectItem(page, 'Garden').click();
  const panel = page.getByTestId('project-panel');
  await panel.waitFor();
  await panel.getByTestId('project-delete').click();
  let dialog = page.getByRole('dialog', { name: 'Delete project?' });
  assert.equal(await dialog.getByTestId('project-delete-keep').isChecked(), true);
  assert.match(await dialog.getByTestId('project-delete-choice').innerText(), /Delete its 2 conversations too/);
  await dialog.getByTestId('project-delete-confirm').click();
  await dialog.waitFor({ state: 'hidden' });
  for (const p of [page, second]) {
    await projectItem(p, 'Garden').waitFor({ state: 'detached' });
    await p.getByTestId('project-panel').waitFor({ state: 'detached' });
    assert.equal(await listHeading(p), 'Conversations');
    for (const id of chats) {
      const row = conversationRow(p, id);
      await row.waitFor();
      await eventually(() => row.getAttribute('data-project-id'), null, 'the conversation left the project');
    }
  }

  // A second project, with a chat, deleted with its conversations.
  await page.getByTestId('new-project-button').click();
  dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.getByLabel('Name').fill('Taxes');
  await dialog.getByTestId('project-save').click();
  await dialog.waitFor({ state: 'hidden' });
  await newChatIn(page, 'Taxes');
  const answer = await ask(page, 'When is the deadline?');
  // No instructions: nothing to follow.
  assert.doesNotMatch(answer, /Following the instructions/);
  const taxChat = page.url().split('/chat/')[1];
  await conversationRow(second, taxChat).waitFor();
  await page.getByTestId('project-panel').getByTestId('project-delete').click();
  dialog = page.getByRole('dialog', { name: 'Delete project?' });
  await dialog.getByTestId('project-delete-conversations').check();
  await dialog.getByTestId('project-delete-confirm').click();
  await dialog.waitFor({ state: 'hidden' });
  // The shown conversation is gone: back to a new chat, without "deleted elsewhere".
  await page.waitForURL(/\/chat$/);
  assert.equal(await page.getByText('The conversation was deleted.').count(), 0);
  for (const p of [page, second]) {
    await projectItem(p, 'Taxes').waitFor({ state: 'detached' });
    await conversationRow(p, taxChat).waitFor({ state: 'detached' });
    // The Garden conversations were not touched.
    for (const id of chats) await conversationRow(p, id).waitFor();
  }
  const gone = await page.evaluate(async (id) => (await fetch(`/api/conversations/${id}`)).status, taxChat);
  assert.equal(gone, 404);
});

test('the projects fit a 360 px phone: the drawer lists them, the panel and the dialogs fit (screenshots kept)', async () => {
  // A project with long words and a document, to fill the panel.
  const made = await page.evaluate(async () => {
    const response = await fetch('/api/projects', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'Vegetable garden on the allotment by the railway',
        instructions: 'Answer as an allotment gardener.\nKeep it short.\nName the month for every task.\nMention the weather.',
      }),
    });
    return { status: response.status, body: await response.json() };
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const { phone, page: p } = await phoneSignedInAs(browser, context, server);
  await p.goto('/chat');
  await p.getByTestId('composer-input').waitFor();
  await p.getByRole('button', { name: 'Open menu' }).click();
  const item = projectItem(p, 'Vegetable garden');
  await item.waitFor();
  await item.click();
  const panel = p.getByTestId('project-panel');
  await panel.waitFor();
  const path = join(dir, 'a-rather-long-document-name-about-planting-times.txt');
  writeFileSync(path, 'Sow beans in May.\n');
  await panel.getByTestId('project-document-input').setInputFiles(path);
  await panel.getByTestId('project-document').and(p.locator('[data-status="ready"]')).waitFor({ timeout: 60_000 });

  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  for (const locator of [item, panel, panel.getByTestId('project-document'), panel.getByTestId('new-chat-in-project')]) {
    const box = await locator.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `${locator} is at ${JSON.stringify(box)}`);
  }
  // The panel's own buttons are all within it (nothing pushed out by the long name).
  const panelBox = await panel.boundingBox();
  for (const id of ['project-edit', 'project-delete', 'project-close', 'project-add-document']) {
    const box = await panel.getByTestId(id).boundingBox();
    assert.ok(box && box.x >= panelBox.x && box.x + box.width <= panelBox.x + panelBox.width + 0.5, `${id} is at ${JSON.stringify(box)}`);
  }
  await p.screenshot({ path: join(ARTIFACTS, 'projects-360.png') });

  await panel.getByTestId('project-edit').click();
  const dialog = p.getByRole('dialog', { name: 'Edit project' });
  await dialog.waitFor();
  const dialogBox = await dialog.boundingBox();
  assert.ok(dialogBox && dialogBox.x >= 0 && dialogBox.x + dialogBox.width <= 360, `the dialog is at ${JSON.stringify(dialogBox)}`);
  assert.equal(await dialog.getByLabel('Name').inputValue(), 'Vegetable garden on the allotment by the railway');
  await p.screenshot({ path: join(ARTIFACTS, 'projects-dialog-360.png') });
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // "New chat in project" closes the drawer and opens the project's new chat.
  await panel.getByTestId('new-chat-in-project').click();
  await p.waitForURL(/\/chat\?project=/);
  await eventually(() => p.getByTestId('conversation-title').innerText(), 'New chat in Vegetable garden on the allotment by the railway', 'the title');
  // The drawer closed (it slides away, then is hidden).
  await p.getByTestId('new-chat-in-project').waitFor({ state: 'hidden' });
  await phone.close();
});

test('a free user gets no way to create projects, only the premium message, and the server refuses one too', async () => {
  const free = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  const p = await free.newPage();
  await p.goto('/');
  await dismissCookies(p);
  await registerThroughDialog(p, server, { name: 'Frank', email: 'frank@example.com', password: PASSWORD });
  await p.goto('/chat');
  const section = p.locator('[data-testid="project-section"][data-gate="premium"]');
  await section.waitFor();
  assert.equal(await p.getByTestId('project-list').count(), 0);
  assert.equal(await p.getByTestId('project-panel').count(), 0);
  await section.getByTestId('new-project-button').click();
  assert.equal(await p.getByRole('dialog', { name: 'New project' }).count(), 0, 'no create dialog');
  const notice = section.getByTestId('chat-notice');
  await notice.waitFor();
  assert.match(await notice.innerText(), /Project management is a premium feature/);
  assert.equal(await notice.getByRole('link', { name: 'Upgrade plan' }).getAttribute('href'), '/settings#subscription');

  // A chat of their own has no "Move to project" (nothing to move it into).
  await ask(p, 'Hello');
  await p.getByTestId('conversation-item').first().getByTestId('conversation-menu-button').click();
  await p.getByTestId('conversation-menu').waitFor();
  assert.equal(await p.getByTestId('move-conversation').count(), 0);
  await p.keyboard.press('Escape');

  const refused = await p.evaluate(async () => {
    const response = await fetch('/api/projects', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Sneaky' }),
    });
    return { status: response.status, body: await response.json() };
  });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.code, 'premium_required');
  assert.equal(refused.body.message, 'Project management is a premium feature');
  await free.close();
});
