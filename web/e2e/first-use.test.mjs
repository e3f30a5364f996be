// End-to-end: what a new user meets in the first hour (issue 32, items 2, 6 and 10),
// through the built client against the real chat-server in Debian's headless Chromium.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { dismissCookies, launchChromium, registerThroughDialog } from './flows.mjs';

const SHOTS = process.env.SHOTS_DIR ?? join(import.meta.dirname, 'artifacts', 'first-use');
const PASSWORD = 'secret12';

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** A new context and page, registered through the landing page's dialog. */
async function newUser(email, { viewport = { width: 1280, height: 800 } } = {}) {
  const context = await browser.newContext({ baseURL: server.url, locale: 'en-US', viewport });
  const page = await context.newPage();
  await page.goto('/');
  await dismissCookies(page);
  await registerThroughDialog(page, server, { name: 'Dora', email, password: PASSWORD });
  return { context, page };
}

/**
 * The socket's close overtakes its `session.revoked` frame (which the client then reads as
 * a revocation of unknown cause), as on a slow tab, and the answer to the delete comes
 * late: the tab sees its session refused before it hears that the account is gone.
 */
async function revocationBeforeTheAnswer(context) {
  await context.routeWebSocket(/\/api\/ws$/, (ws) => {
    const upstream = ws.connectToServer();
    ws.onMessage((message) => upstream.send(message));
    upstream.onMessage((message) => {
      if (!String(message).includes('"session.revoked"')) ws.send(message);
    });
    ws.onClose((code, reason) => upstream.close({ code, reason }));
    upstream.onClose((code, reason) => ws.close({ code, reason }));
  });
  await context.route('**/api/auth/profile', async (route) => {
    if (route.request().method() !== 'DELETE') return route.fallback();
    const response = await route.fetch();
    // Longer than the socket's 3 s wait for another tab's new token.
    await new Promise((r) => setTimeout(r, 4500));
    return route.fulfill({ response });
  });
}

async function deleteAccount(page, email) {
  await page.goto('/profile');
  await page.getByRole('button', { name: 'Delete account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete your account?' });
  const confirm = dialog.getByRole('button', { name: 'Delete permanently' });
  const field = dialog.getByLabel(`To confirm, type your email address: ${email}`);
  // Nothing typed, or another address: the button stays disabled.
  assert.equal(await confirm.isDisabled(), true);
  await field.fill('someone-else@example.com');
  assert.equal(await confirm.isDisabled(), true);
  const text = await dialog.innerText();
  for (const words of ['conversations and messages', 'shared links', 'Invoices and payment records are kept']) {
    assert.ok(text.includes(words), `the dialog says "${words}":\n${text}`);
  }
  // Trimmed and in any case, as typed by hand.
  await field.fill(` ${email.toUpperCase()} `);
  await confirm.click();
  await page.waitForURL((url) => url.pathname === '/', { timeout: 15_000 });
}

/** What the landing page shows after the deletion, and the login dialog opened then. */
async function assertDeletedCleanly(page, email, shot) {
  await page.getByText('Your account has been deleted.').waitFor();
  // Whatever raced the deletion, no dialog asks to log in again.
  await page.waitForTimeout(500);
  assert.deepEqual(await page.locator('dialog[open]').allInnerTexts(), []);
  await page.screenshot({ path: join(SHOTS, `${shot}.png`) });

  await page.getByRole('button', { name: 'Log in' }).first().click();
  const login = page.getByRole('dialog', { name: 'Log in' });
  await login.waitFor();
  let text = await login.innerText();
  assert.ok(!text.includes('Your session has ended'), text);
  assert.ok(!text.includes('Invalid email or password'), text);

  // The deleted account no longer logs in; only that is said.
  await login.getByLabel('Email').fill(email);
  await login.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await login.getByRole('button', { name: 'Log in' }).click();
  await login.getByText('Invalid email or password').waitFor();
  text = await login.innerText();
  assert.ok(!text.includes('Your session has ended'), text);
  await page.screenshot({ path: join(SHOTS, `${shot}-login.png`) });
}

test('account deletion asks for the typed address, then leaves a clean landing page', async () => {
  const email = 'dora.delete@example.com';
  const { context, page } = await newUser(email);
  await deleteAccount(page, email);
  await assertDeletedCleanly(page, email, 'deleted-1280');
  await context.close();
});

test('a deletion whose answer comes after the socket was refused opens no "session ended" login', async () => {
  const email = 'dora.race@example.com';
  const { context, page } = await newUser(email);
  await revocationBeforeTheAnswer(context);
  // A page load, so the socket goes through the route.
  await deleteAccount(page, email);
  await assertDeletedCleanly(page, email, 'deleted-race-1280');
  await context.close();
});

/** Whether a modal dialog (which makes the page inert) is showing. */
const modalShown = (page) => page.evaluate(() => document.querySelector('dialog:modal') !== null);

test('the privacy policy is readable before choosing: the cookie choices are a banner there, a modal elsewhere', async () => {
  for (const [width, height] of [[360, 740], [1280, 800]]) {
    for (const [locale, title, reject] of [
      ['en-US', 'Cookie settings', 'Reject optional'],
      ['hu-HU', 'Sütibeállítások', 'Választhatók elutasítása'],
    ]) {
      const guest = await browser.newContext({ baseURL: server.url, locale, viewport: { width, height } });
      const page = await guest.newPage();
      await page.goto('/privacy-policy');
      await page.getByTestId('privacy-policy').waitFor();
      const banner = page.getByRole('region', { name: title });
      await banner.waitFor();
      assert.equal(await modalShown(page), false, `${locale} ${width}: no modal on the policy`);
      await page.screenshot({ path: join(SHOTS, `policy-banner-${locale}-${width}.png`) });

      // The page scrolls, and its own links work under the banner.
      await page.mouse.wheel(0, 600);
      await page.waitForFunction(() => window.scrollY > 0);
      await page.locator('nav a[href="#retention"]').click();
      await page.waitForURL(/#retention$/);
      // Read to the end: the last words are above the banner, not behind it.
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      const bannerTop = (await banner.boundingBox()).y;
      const last = await page.getByTestId('privacy-policy').boundingBox();
      assert.ok(last.y + last.height <= bannerTop + 1, `${locale} ${width}: the policy ends above the banner`);

      // The same choices as the dialog; choosing ends the banner and nothing asks again.
      await banner.getByRole('button', { name: reject }).click();
      await banner.waitFor({ state: 'detached' });
      await page.goto('/');
      await page.waitForTimeout(300);
      assert.equal(await modalShown(page), false, 'the choice holds on the other pages');
      await guest.close();
    }
  }

  // Elsewhere the first visit still gets the modal dialog.
  const guest = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  const page = await guest.newPage();
  await page.goto('/');
  await page.getByRole('dialog', { name: 'Cookie settings' }).waitFor();
  assert.equal(await modalShown(page), true);
  // Its policy link leads to the policy, where the banner takes over.
  await page.getByRole('dialog', { name: 'Cookie settings' }).getByRole('link', { name: 'privacy policy' }).click();
  await page.getByRole('region', { name: 'Cookie settings' }).waitFor();
  assert.equal(await modalShown(page), false);
  await guest.close();
});

/**
 * An OpenAI-compatible model that is down (500) until told otherwise, then streams
 * "Hello from the stub model." as server-sent events; titles get a plain answer.
 */
async function startModelStub() {
  const { createServer } = await import('node:http');
  const state = { down: true, answers: 0 };
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-stub', object: 'chat.completion.chunk', created: 1, model: 'stub', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const stub = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const request = JSON.parse(body || '{}');
      if (state.down) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the model is down', type: 'server_error' } }));
        return;
      }
      if (!request.stream) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-stub', object: 'chat.completion', created: 1, model: 'stub', choices: [{ index: 0, message: { role: 'assistant', content: 'Stub title' }, finish_reason: 'stop' }] }));
        return;
      }
      state.answers += 1;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      for (const word of ['Hello ', 'from ', 'the ', 'stub ', 'model.']) res.write(chunk({ content: word }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((r) => stub.listen(0, '127.0.0.1', r));
  return { state, url: `http://127.0.0.1:${stub.address().port}/v1`, close: () => new Promise((r) => stub.close(r)) };
}

test('an answer that failed because the model was down is tried again from its "Try again", in both languages', async () => {
  const model = await startModelStub();
  const withModel = await startServer({ env: { OPENAI_API_KEY: 'sk-stub', OPENAI_BASE_URL: model.url, OPENAI_EMBEDDINGS: 'false' } });
  try {
    for (const [locale, label, failedText] of [
      ['en-US', 'Try again', 'The answer could not be completed.'],
      ['hu-HU', 'Próbálja újra', 'A választ nem sikerült befejezni.'],
    ]) {
      model.state.down = true;
      const context = await browser.newContext({ baseURL: withModel.url, locale, viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto('/');
      await dismissCookies(page);
      const email = `retry.${locale.toLowerCase()}@example.com`;
      // Registration speaks the browser's language; the shared helper clicks English labels.
      const post = (path, body) =>
        page.evaluate(
          async ([path, body]) => {
            const response = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
            return response.json();
          },
          [path, body],
        );
      const mark = withModel.log().length;
      const sent = await post('/api/auth/register/send-code', { name: 'Rita', email, password: PASSWORD, privacyAccepted: true, language: locale });
      await post('/api/auth/register/verify', { token: sent.token, code: await withModel.codeFor(email, { after: mark }) });
      await page.goto('/chat');
      await page.getByTestId('composer-input').fill('Is the model there?');
      await page.getByTestId('send-button').click();

      const answer = page.getByTestId('message-assistant').last();
      await answer.and(page.locator('[data-status="error"]')).waitFor({ timeout: 30_000 });
      assert.ok((await answer.innerText()).includes(failedText));
      const retry = answer.getByRole('button', { name: label });
      await page.screenshot({ path: join(SHOTS, `answer-failed-${locale}-1280.png`) });

      model.state.down = false;
      await retry.click();
      // A new version of the answer, made by the model that is back.
      const again = page.getByTestId('message-assistant').last();
      await again.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
      assert.match(await again.innerText(), /Hello from the stub model\./);
      assert.equal(await page.getByTestId('message-user').count(), 1, 'the question is not asked twice');
      await page.screenshot({ path: join(SHOTS, `answer-retried-${locale}-1280.png`) });
      await context.close();
    }
  } finally {
    await withModel.stop();
    await model.close();
  }
});
