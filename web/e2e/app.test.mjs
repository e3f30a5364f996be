// End-to-end: the built web client against the real chat-server, in Debian's headless
// Chromium driven by playwright-core (no test tool downloads a browser).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { join } from 'node:path';
import { startServer } from './server.mjs';
import { registerThroughDialog, saveBillingInfo, launchChromium, dismissCookies } from './flows.mjs';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');
const EMAIL = 'ann@example.com';
const PASSWORD = 'secret12';

let server;
let browser;
let context;
let page;

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  page = await context.newPage();
  mkdirSync(ARTIFACTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('a visitor without a token is sent back to the index page', async () => {
  const guest = await browser.newContext({ baseURL: server.url });
  const p = await guest.newPage();
  for (const path of ['/chat', '/settings', '/profile', '/no-such-page']) {
    await p.goto(path);
    await p.waitForURL((url) => url.pathname === '/', { timeout: 10_000 });
  }
  await p.goto('/privacy-policy');
  await p.getByTestId('privacy-policy').waitFor();
  await guest.close();
});

test('a visitor registers with the mailed code and lands logged in', async () => {
  await page.goto('/');
  await dismissCookies(page);
  await registerThroughDialog(page, server, { name: 'Ann', email: EMAIL, password: PASSWORD });
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
});

test('an answer streams in, and a second page of the same user sees it stream too', async () => {
  await page.goto('/chat');
  await page.getByTestId('composer-input').fill('Hello from the browser');
  await page.getByTestId('send-button').click();
  const first = page.getByTestId('message-assistant').last();
  await first.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  assert.match(await first.innerText(), /You said/);
  await page.waitForURL(/\/chat\/.+/);

  const second = await context.newPage();
  await second.goto(page.url());
  await second.getByTestId('composer-input').waitFor();
  await page.getByTestId('composer-input').fill('And once more');
  await page.getByTestId('send-button').click();
  // The second page shows the new answer while it streams, then complete.
  const mirrored = second.getByTestId('message-assistant').nth(1);
  await mirrored.and(second.locator('[data-status="streaming"]')).waitFor({ timeout: 30_000 });
  await mirrored.and(second.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  const here = page.getByTestId('message-assistant').nth(1);
  await here.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  assert.equal(await mirrored.innerText(), await here.innerText());
  await second.close();
});

test('the interface switches to Hungarian', async () => {
  await page.goto('/settings');
  await page.getByTestId('settings-language').selectOption('hu-HU');
  await page.getByRole('link', { name: 'Beállítások' }).first().waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'hu-HU');
  await page.getByTestId('settings-language').selectOption('en-US');
  await page.getByRole('link', { name: 'Settings' }).first().waitFor();
});

test('the plan changes to base through the demo payment', async () => {
  await page.goto('/settings#subscription');
  await page.getByTestId('choose-plan-base').click();
  // A new user has no billing info: the form comes first, and the checkout opens as soon
  // as it is saved.
  await page.getByTestId('billing-form').waitFor();
  await saveBillingInfo(page, { name: 'Ann Smith', address: 'Fő utca 1', city: 'Budapest', postalCode: '1011', country: 'HU' });
  await page.getByTestId('confirm-dialog-confirm').click();
  // The demo provider's own checkout page, then back to the client.
  await page.waitForURL(/\/api\/payments\/demo\//, { timeout: 15_000 });
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.waitForURL(/\/payment-success/, { timeout: 15_000 });
  await page.goto('/settings#subscription');
  await page.getByTestId('current-plan').filter({ hasText: /base/i }).waitFor();
});

test('the chat is usable 360 px wide (screenshot kept as an artifact)', async () => {
  const phone = await browser.newContext({ baseURL: server.url, viewport: { width: 360, height: 740 } });
  const storage = await context.storageState();
  await phone.addCookies(storage.cookies);
  const p = await phone.newPage();
  await p.goto('/');
  await p.evaluate((items) => {
    for (const { name, value } of items) localStorage.setItem(name, value);
  }, storage.origins.find((o) => o.origin === server.url)?.localStorage ?? []);
  await p.goto('/chat');
  await p.getByTestId('composer-input').waitFor();
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  await p.screenshot({ path: join(ARTIFACTS, 'chat-360.png'), fullPage: true });
  await phone.close();
});
