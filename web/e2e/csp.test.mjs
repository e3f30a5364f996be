// The Content-Security-Policy in a real browser: the built client runs under it without a
// violation, and the detector that every e2e test relies on (flows.mjs) catches one.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { assertNoCspViolations, dismissCookies, launchChromium, registerThroughDialog, takeCspViolations } from './flows.mjs';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');

let server;
let browser;
let context;

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US', viewport: { width: 1280, height: 800 } });
  mkdirSync(ARTIFACTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits up to 5 s for the detector to fail and answers its error. One violation arrives
 * twice (the event and the console message), not always together: the late copy is
 * taken too, so the check after the test finds nothing.
 */
async function detectorFailure() {
  for (let i = 0; i < 50; i += 1) {
    try {
      assertNoCspViolations();
    } catch (error) {
      await pause(500);
      takeCspViolations();
      return error;
    }
    await pause(100);
  }
  return null;
}

test('an inline script injected into the page is refused, and the detector fails on it', async () => {
  const page = await context.newPage();
  const response = await page.goto('/');
  assert.match(response.headers()['content-security-policy'], /script-src 'self';/);
  await page.getByTestId('landing-register').waitFor();
  await page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.injected = true';
    document.body.append(script);
  });
  assert.equal(await page.evaluate(() => window.injected ?? false), false, 'the inline script did not run');
  const failure = await detectorFailure();
  assert.ok(failure, 'the detector reported the inline script');
  assert.match(failure.message, /script-src/);
  await page.close();
});

test('an inline style attribute from markup is refused and caught too', async () => {
  const page = await context.newPage();
  await page.goto('/');
  await page.getByTestId('landing-register').waitFor();
  await page.evaluate(() => {
    document.body.insertAdjacentHTML('beforeend', '<p style="color: red">injected</p>');
  });
  const failure = await detectorFailure();
  assert.ok(failure, 'the detector reported the style attribute');
  assert.match(failure.message, /style-src/);
  await page.close();
});

test('the chat page at 1280 px has its styles under the policy (screenshot kept)', async () => {
  const page = await context.newPage();
  await page.goto('/');
  await dismissCookies(page);
  await registerThroughDialog(page, server, { name: 'Cee', email: 'cee@example.com', password: 'secret12' });
  await page.goto('/chat');
  const composer = page.getByTestId('composer-input');
  await composer.waitFor();
  // The stylesheets applied: the composer is laid out, not a bare unstyled textarea.
  const style = await composer.evaluate((el) => getComputedStyle(el).fontFamily);
  assert.notEqual(style, '', 'a font family from the stylesheet');
  const sheets = await page.evaluate(() => document.styleSheets.length);
  assert.ok(sheets > 0, 'stylesheets loaded');
  await page.getByTestId('composer-input').fill('Hello under the policy');
  await page.getByTestId('send-button').click();
  await page.getByTestId('message-assistant').last().and(page.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(ARTIFACTS, 'chat-1280-csp.png') });
  await page.close();
});
