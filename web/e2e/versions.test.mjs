// End-to-end: versions of messages (an edited question, a regenerated answer), switching
// between them, copying a message and rating an answer, in two tabs of one user, in
// Debian's headless Chromium against the real chat-server (see app.test.mjs). The model
// is the demo model: each answer starts "You said: *<the question>*." and streams for a
// few seconds, so a new version is seen while it is written and once it is done.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { dismissCookies, launchChromium, phoneSignedInAs, registerOverApi } from './flows.mjs';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');
const EMAIL = 'vera@example.com';
const PASSWORD = 'secret12';
const ANSWER_MS = 30_000;

let server;
let browser;
let context;
/** The two tabs of the same user, on the same conversation. */
let one;
let two;

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  // Copy and read back: the page may use the clipboard without asking.
  context = await browser.newContext({
    baseURL: server.url,
    locale: 'en-US',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  one = await context.newPage();
  mkdirSync(ARTIFACTS, { recursive: true });
  await one.goto('/');
  await dismissCookies(one);
  await registerOverApi(one, server, { name: 'Vera', email: EMAIL, password: PASSWORD });
  // Plus: several chat models, so regenerate offers a menu of them.
  await server.cli(['users', 'set-plan', EMAIL, 'plus']);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The n-th (from 0) message of the branch a tab shows, question or answer. */
const question = (page, n = 0) => page.getByTestId('message-user').nth(n);
const answer = (page, n = 0) => page.getByTestId('message-assistant').nth(n);

async function completed(message) {
  await message.and(message.page().locator('[data-status="complete"]')).waitFor({ timeout: ANSWER_MS });
}

/** The `‹ i / n ›` label of a message, or null when it has one version. */
async function versionLabel(message) {
  const label = message.getByTestId('version-label');
  return (await label.count()) === 0 ? null : (await label.innerText()).trim();
}

/**
 * Clicks a message's control once the list has stopped moving: scrolled into view, the
 * list's own scrolling after it (following its end, the "latest message" button coming
 * or going) done. A click computed before such a shift would land beside the control.
 */
async function press(control) {
  await control.scrollIntoViewIfNeeded();
  const page = control.page();
  for (let i = 0; i < 2; i += 1) {
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  }
  await control.click();
}

async function waitForLabel(message, expected) {
  const label = message.getByTestId('version-label');
  await label.filter({ hasText: expected }).waitFor({ timeout: ANSWER_MS });
}

test('a question is asked and both tabs show the conversation', async () => {
  await one.goto('/chat');
  await one.getByTestId('composer-input').fill('What is a lighthouse?');
  await one.getByTestId('send-button').click();
  await completed(answer(one));
  await one.waitForURL(/\/chat\/.+/);
  two = await context.newPage();
  await two.goto(one.url());
  await completed(answer(two));
  assert.equal(await versionLabel(question(one)), null, 'one version: no switcher');
  assert.match(await answer(two).innerText(), /You said: What is a lighthouse\?/);
});

test('an edited question is a second version: its answer streams, and both tabs show 2 / 2', async () => {
  await one.bringToFront();
  await question(one).hover();
  await press(question(one).getByRole('button', { name: 'Edit message' }));
  const box = one.getByTestId('edit-box');
  const input = box.getByRole('textbox', { name: 'Edit your message' });
  assert.equal(await input.inputValue(), 'What is a lighthouse?');
  // An empty text cannot be sent; Escape leaves the question as it was.
  await input.fill('   ');
  assert.equal(await box.getByRole('button', { name: 'Send' }).isDisabled(), true);
  await input.press('Escape');
  await box.waitFor({ state: 'hidden' });
  assert.match(await question(one).innerText(), /What is a lighthouse\?/);

  await press(question(one).getByRole('button', { name: 'Edit message' }));
  await one.getByTestId('edit-input').fill('Who keeps a lighthouse?');
  await one.getByTestId('edit-box').getByRole('button', { name: 'Send' }).click();
  // The new answer is written in the new branch, in this tab and the other one.
  await answer(one).and(one.locator('[data-status="streaming"]')).waitFor({ timeout: ANSWER_MS });
  await completed(answer(one));
  assert.match(await answer(one).innerText(), /You said: Who keeps a lighthouse\?/);
  await waitForLabel(question(one), '2 / 2');
  await waitForLabel(question(two), '2 / 2');
  await completed(answer(two));
  assert.match(await question(two).innerText(), /Who keeps a lighthouse\?/);
  assert.match(await answer(two).innerText(), /You said: Who keeps a lighthouse\?/);
  // The answer of the new question is its only one.
  assert.equal(await versionLabel(answer(one)), null);
});

test('a regenerated answer is a second version of the answer, in both tabs', async () => {
  await one.bringToFront();
  await press(answer(one).getByRole('button', { name: 'Regenerate' }));
  const menu = one.getByRole('menu', { name: 'Regenerate with' });
  // The answer's own model first, then the plan's other chat models.
  const items = await menu.getByRole('menuitem').allInnerTexts();
  assert.equal(items.length, 3, items.join(' | '));
  assert.match(items[0], /The same model \(gpt-4\.1-mini\)/, 'Plus answers with gpt-4.1-mini');
  await menu.getByRole('menuitem', { name: 'gpt-4o', exact: true }).click();
  await waitForLabel(answer(one), '2 / 2');
  await completed(answer(one));
  await waitForLabel(answer(two), '2 / 2');
  await completed(answer(two));
  assert.match(await answer(one).innerText(), /Model: gpt-4o\n/);
  assert.match(await answer(two).innerText(), /Model: gpt-4o\n/);
  // The first answer is one step back.
  await press(answer(one).getByRole('button', { name: 'Previous version' }));
  await waitForLabel(answer(one), '1 / 2');
  assert.match(await answer(one).innerText(), /Model: gpt-4\.1-mini/);
  await waitForLabel(answer(two), '1 / 2');
  await press(answer(one).getByRole('button', { name: 'Next version' }));
  await waitForLabel(answer(two), '2 / 2');
});

test('switching back to the first question in one tab shows it in the other', async () => {
  await one.bringToFront();
  await press(question(one).getByRole('button', { name: 'Previous version' }));
  await waitForLabel(question(one), '1 / 2');
  assert.match(await question(one).innerText(), /What is a lighthouse\?/);
  assert.match(await answer(one).innerText(), /You said: What is a lighthouse\?/);
  await waitForLabel(question(two), '1 / 2');
  assert.match(await question(two).innerText(), /What is a lighthouse\?/);
  assert.match(await answer(two).innerText(), /You said: What is a lighthouse\?/);
  // A reload shows the branch the server keeps as current.
  await two.reload();
  await waitForLabel(question(two), '1 / 2');
  assert.match(await answer(two).innerText(), /You said: What is a lighthouse\?/);
});

test('a message is copied as its Markdown source, with a "Copied" confirmation', async () => {
  await one.bringToFront();
  const copy = answer(one).getByRole('button', { name: 'Copy', exact: true });
  await copy.focus();
  await one.keyboard.press('Enter');
  await answer(one).getByRole('button', { name: 'Copied', exact: true }).waitFor();
  const copied = await one.evaluate(() => navigator.clipboard.readText());
  // The source, not the rendered text: its emphasis and bold are still Markdown.
  assert.match(copied, /^You said: \*What is a lighthouse\?\*\./);
  assert.match(copied, /\*\*demo/);
  // The confirmation goes after a moment.
  await answer(one).getByRole('button', { name: 'Copy', exact: true }).waitFor({ timeout: 5000 });

  await press(question(one).getByRole('button', { name: 'Copy', exact: true }));
  assert.equal(await one.evaluate(() => navigator.clipboard.readText()), 'What is a lighthouse?');
});

test('a thumbs down with a comment shows chosen in both tabs, and again takes it back', async () => {
  await one.bringToFront();
  const down = answer(one).getByRole('button', { name: 'Bad answer' });
  await press(down);
  const comment = answer(one).getByTestId('feedback-comment');
  await comment.getByRole('textbox').fill('It says nothing about the lamp.');
  const saved = one.waitForResponse((r) => r.url().includes('/feedback') && r.request().method() === 'PUT' && r.request().postData()?.includes('lamp'));
  await comment.getByRole('button', { name: 'Send' }).click();
  const response = await saved;
  assert.deepEqual((await response.json()).data, { rating: 'down', comment: 'It says nothing about the lamp.' });
  await comment.waitFor({ state: 'hidden' });
  assert.equal(await down.getAttribute('aria-pressed'), 'true');
  const downThere = answer(two).getByRole('button', { name: 'Bad answer' });
  await answer(two).locator('[data-testid="feedback-down"][aria-pressed="true"]').waitFor({ timeout: 10_000 });
  assert.equal(await answer(two).getByRole('button', { name: 'Good answer' }).getAttribute('aria-pressed'), 'false');
  // Kept by the server: a reload shows it too.
  await two.reload();
  await answer(two).locator('[data-testid="feedback-down"][aria-pressed="true"]').waitFor({ timeout: 10_000 });

  // Skip keeps a thumbs up without a comment; the same thumb again takes it back.
  const up = answer(one).getByRole('button', { name: 'Good answer' });
  await press(up);
  await answer(one).getByTestId('feedback-comment').getByRole('button', { name: 'Skip' }).click();
  assert.equal(await up.getAttribute('aria-pressed'), 'true');
  assert.equal(await down.getAttribute('aria-pressed'), 'false');
  await answer(two).locator('[data-testid="feedback-up"][aria-pressed="true"]').waitFor({ timeout: 10_000 });
  await press(up);
  await answer(two).locator('[data-testid="feedback-up"][aria-pressed="false"]').waitFor({ timeout: 10_000 });
  assert.equal(await downThere.getAttribute('aria-pressed'), 'false');
  await answer(one).getByTestId('feedback-comment').waitFor({ state: 'hidden' });
});

test('360 px wide: the actions fit, nothing scrolls sideways', async () => {
  const { phone, page } = await phoneSignedInAs(browser, context, server);
  await page.goto(new URL(one.url()).pathname);
  await completed(answer(page));
  await waitForLabel(question(page), '1 / 2');
  // The question's and the answer's actions are shown without hover on a phone.
  for (const bar of [question(page).getByTestId('question-actions'), answer(page).getByTestId('answer-actions')]) {
    const box = await bar.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `actions at ${JSON.stringify(box)}`);
    for (const button of await bar.getByRole('button').all()) {
      const b = await button.boundingBox();
      assert.ok(b && b.x >= 0 && b.x + b.width <= 360, `a button at ${JSON.stringify(b)}`);
      // Shown, not faded in on hover (a version switcher's end is dimmed as disabled).
      if (await button.isEnabled()) assert.equal(await button.evaluate((el) => getComputedStyle(el).opacity), '1');
    }
  }
  // The edit box too.
  await press(question(page).getByRole('button', { name: 'Edit message' }));
  await page.getByTestId('edit-box').waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  const edit = await page.getByTestId('edit-box').boundingBox();
  assert.ok(edit && edit.x >= 0 && edit.x + edit.width <= 360, `the edit box at ${JSON.stringify(edit)}`);
  await page.screenshot({ path: join(ARTIFACTS, 'versions-360.png') });
  await page.getByTestId('edit-input').press('Escape');
  await page.getByTestId('edit-box').waitFor({ state: 'hidden' });
  // The regenerate menu stays on the screen.
  await press(answer(page).getByRole('button', { name: 'Regenerate' }));
  const menu = await page.getByRole('menu', { name: 'Regenerate with' }).boundingBox();
  assert.ok(menu && menu.x >= 0 && menu.x + menu.width <= 360, `the menu at ${JSON.stringify(menu)}`);
  assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0);
  await phone.close();
});
