// End-to-end: the operator's dashboard at /admin (issue 35). Two users sign up and pay for
// Base with the demo provider, one in euros and one in forints; one of them asks the demo
// model something, and a third asks something and deletes their account. An admin opens
// /admin and finds the sign-ups (the deleted account's too), the payments (net, each
// currency apart), the new subscriptions, the MRR, the subscriptions active now, the
// messages, tokens and cost, and the costliest users (a link to the buyer, the deleted
// account as such) in the figures, charts and tables; changes the range (the request and
// the address follow; a range before today is empty); and the page fits a 360 px phone
// and a 1280 px screen in English and Hungarian (screenshots kept in e2e/artifacts). A
// user who is no admin never downloads the chart library, nor does the service worker
// cache it for them. A server and browser of its own; the browser's zone is Budapest,
// sent as the stats' `tz`.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { callApi as call, dismissCookies, launchChromium, registerOverApi } from './flows.mjs';

const ADMIN = { name: 'Ada Root', email: 'ada@example.com', password: 'secret12' };
const BEA = { name: 'Bea Buyer', email: 'bea@example.com', password: 'secret12' };
const CSABA = { name: 'Csaba Vevő', email: 'csaba@example.com', password: 'secret12' };
const DEZSO = { name: 'Dezső Távozó', email: 'dezso@example.com', password: 'secret12' };
const ZONE = 'Europe/Budapest';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');

let server;
let browser;
let admin;
/** The net amounts paid, by currency. */
const paid = {};
let cycle;

async function signedInPage(person) {
  const context = await browser.newContext({
    baseURL: server.url,
    locale: 'en-US',
    timezoneId: ZONE,
    viewport: { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, person);
  return page;
}

/** Buys Base in `currency` with the demo provider; resolves with the payment. */
async function buyBase(page, person, currency) {
  const billing = { billingType: 'private', billingInfo: { name: person.name, address: 'Fő utca 1', city: 'Budapest', postalCode: '1011', country: 'HU' } };
  assert.equal((await call(page, 'PUT', '/api/settings/billing-info', billing)).status, 200);
  const started = await call(page, 'PUT', '/api/subscription/change', { planType: 'base', currency });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const payment = started.body.payment;
  const answer = await call(page, 'POST', `/api/payments/demo/${payment._id}/pay`);
  assert.ok([0, 303].includes(answer.status), `paying answered ${answer.status}`);
  return payment;
}

/** Sends a question in a new conversation and waits for the whole answer. */
async function ask(page, question) {
  await page.goto('/chat');
  await page.getByTestId('composer-input').fill(question);
  await page.getByTestId('send-button').click();
  await page.getByTestId('message-assistant').last().and(page.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
}

/** Today and the days around it in Budapest, as the page counts them (YYYY-MM-DD). */
function budapestDay(offsetDays = 0) {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  const date = new Date(`${today}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + offsetDays);
  return date.toISOString().slice(0, 10);
}

const plain = (text) => text.replace(/[\u00a0\u202f\s]+/g, ' ').trim();

/** Money as the page shows it in en-US (lib/format.ts), no-break spaces as plain ones. */
function money(amount, currency) {
  return plain(
    new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency,
      minimumFractionDigits: currency === 'EUR' ? 2 : 0,
      maximumFractionDigits: 2,
    }).format(amount),
  );
}

/** The lines of a key figure (its label first), read from the page. */
async function figure(page, name) {
  const lines = await page
    .getByTestId(`admin-figure-${name}`)
    .locator('dd')
    .evaluate((dd) => (dd.querySelectorAll('span').length ? [...dd.children].map((s) => s.textContent) : [dd.textContent]));
  return lines.map(plain);
}

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer();
  browser = await launchChromium();
  admin = await signedInPage(ADMIN);
  await server.cli(['users', 'grant-admin', ADMIN.email]);

  const bea = await signedInPage(BEA);
  const eur = await buyBase(bea, BEA, 'EUR');
  paid.EUR = eur.netAmount;
  cycle = eur.billingCycle;
  const csaba = await signedInPage(CSABA);
  paid.HUF = (await buyBase(csaba, CSABA, 'HUF')).netAmount;
  await csaba.context().close();

  // Bea asks the demo model one thing; so does Dezső, who then deletes his account.
  await ask(bea, 'What does the service cost?');
  await bea.context().close();
  const dezso = await signedInPage(DEZSO);
  await ask(dezso, 'Who am I?');
  assert.equal((await call(dezso, 'DELETE', '/api/auth/profile')).status, 200);
  await dezso.context().close();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('an admin sees today’s sign-ups, payments, subscriptions, messages and costliest users on /admin', async () => {
  const requests = [];
  admin.on('request', (request) => {
    if (request.url().includes('/api/admin/stats')) requests.push(new URL(request.url()));
  });
  await admin.goto('/admin');
  await admin.getByTestId('admin-figure-signUps').waitFor();

  // The last 30 days by default, ending today in the browser's zone.
  const first = requests[0];
  assert.equal(first.searchParams.get('from'), budapestDay(-29));
  assert.equal(first.searchParams.get('to'), budapestDay(0));
  assert.equal(first.searchParams.get('by'), 'day');
  assert.equal(first.searchParams.get('tz'), ZONE);

  assert.deepEqual(await figure(admin, 'signUps'), ['4']);
  assert.deepEqual(await figure(admin, 'newSubscriptions'), ['2']);
  assert.deepEqual(await figure(admin, 'messages'), ['2']);
  // A deleted account's calls stay in the sums, but it is no active user.
  assert.equal((await figure(admin, 'activeUsers'))[0], '1 last day');
  const [tokensIn, tokensOut] = (await figure(admin, 'tokens')).map((line) => Number(line.replace(/[^0-9]/g, '')));
  assert.ok(tokensIn > 0 && tokensOut > 0, `tokens ${tokensIn} in, ${tokensOut} out`);
  assert.match((await figure(admin, 'cost'))[0], /^€0\.0*[1-9]/);
  assert.deepEqual(await figure(admin, 'revenue'), [money(paid.EUR, 'EUR'), money(paid.HUF, 'HUF')]);
  assert.deepEqual(await figure(admin, 'refunds'), [money(0, 'EUR'), money(0, 'HUF')]);
  if (cycle === 'monthly') assert.deepEqual(await figure(admin, 'mrr'), [money(paid.EUR, 'EUR'), money(paid.HUF, 'HUF')]);

  // Both subscriptions are Base ones, in one row of the table of now.
  const rows = admin.getByTestId('admin-subscriptions-row');
  assert.equal(await rows.count(), 1);
  assert.equal(plain(await rows.first().textContent()), `Base${cycle === 'monthly' ? 'Monthly' : 'One-time'}2`);

  // The charts are drawn (a canvas each), and say the same in words for screen readers.
  const activity = admin.getByRole('figure', { name: 'Messages and active users per day' });
  await activity.locator('canvas').first().waitFor();
  const todayName = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: ZONE }).format(new Date());
  assert.equal(
    plain(await admin.getByTestId('admin-chart-revenue-eur-summary').textContent()),
    `Revenue: ${money(paid.EUR, 'EUR')} in total, most on ${todayName} (${money(paid.EUR, 'EUR')}). Refunds: none.`,
  );
  await admin.getByTestId('admin-chart-revenue-eur').locator('canvas').first().waitFor();
  await admin.getByTestId('admin-chart-revenue-huf').locator('canvas').first().waitFor();
  assert.match(plain(await admin.getByTestId('admin-chart-activity-summary').textContent()), /^Messages: 2 in total, most on /);

  // The two answers are in the table by model; the costliest users are Bea, linking to her
  // page, and the deleted account, shown as such.
  const models = admin.getByTestId('admin-by-model-row');
  assert.ok((await models.count()) >= 1);
  const answers = await models.evaluateAll((rows) => rows.map((row) => Number(row.querySelector('td[data-label="Messages"]').textContent)));
  assert.equal(answers.reduce((sum, n) => sum + n, 0), 2);
  const top = admin.getByTestId('admin-top-users-row');
  assert.equal(await top.count(), 2);
  await top.filter({ hasText: 'Deleted account' }).waitFor();
  const bea = top.getByRole('link', { name: BEA.email });
  assert.match(await bea.getAttribute('href'), /^\/admin\/users\/[0-9a-f-]+$/);

  // The per-day table's newest row is today's.
  await admin.getByTestId('admin-dashboard-per-day').locator('summary').click();
  const today = admin.getByTestId('admin-per-day-row').first();
  assert.equal(await today.locator('time').getAttribute('datetime'), budapestDay(0));

  // Bea's link opens her page in the console.
  await bea.click();
  await admin.getByTestId('admin-user-page').waitFor();
  await admin.getByRole('heading', { level: 1, name: BEA.email }).waitFor();
});

test('changing the range asks for it and keeps it in the address; a range before today is empty', async () => {
  await admin.goto('/admin');
  await admin.getByTestId('admin-figure-signUps').waitFor();
  const asked = (from, to) =>
    admin.waitForResponse((response) => {
      const url = new URL(response.url());
      return url.pathname === '/api/admin/stats' && url.searchParams.get('from') === from && url.searchParams.get('to') === to;
    });

  let answer = asked(budapestDay(-6), budapestDay(0));
  await admin.getByTestId('admin-dashboard-range-select').selectOption('7d');
  assert.equal((await answer).status(), 200);
  await admin.waitForURL(/\/admin\?range=7d$/);
  await admin.getByTestId('admin-figure-signUps').waitFor();
  assert.deepEqual(await figure(admin, 'signUps'), ['4']);

  // Custom dates: the week before yesterday has nothing in it.
  await admin.getByTestId('admin-dashboard-range-select').selectOption('custom');
  const form = admin.getByTestId('admin-dashboard-custom');
  await form.getByLabel('From').fill(budapestDay(-8));
  await form.getByLabel('To').fill(budapestDay(-1));
  answer = asked(budapestDay(-8), budapestDay(-1));
  await form.getByRole('button', { name: 'Show' }).click();
  assert.equal((await answer).status(), 200);
  await admin.getByTestId('admin-dashboard-empty').waitFor();
  assert.deepEqual(await figure(admin, 'signUps'), ['0']);
  assert.match(admin.url(), new RegExp(`/admin\\?from=${budapestDay(-8)}&to=${budapestDay(-1)}$`));

  // Back: the 7 days again, from the address (as the dates they were when "Custom dates"
  // was picked, which took the preset's place in the history).
  await admin.goBack();
  await admin.waitForURL(new RegExp(`/admin\\?from=${budapestDay(-6)}&to=${budapestDay(0)}$`));
  await admin.getByTestId('admin-chart-activity').waitFor();
  assert.deepEqual(await figure(admin, 'signUps'), ['4']);
});

test('a user who is no admin never downloads the chart library', async () => {
  const context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  const page = await context.newPage();
  const scripts = [];
  page.on('request', (request) => {
    if (request.resourceType() === 'script') scripts.push(request.url());
  });
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, { name: 'Dora', email: 'dora@example.com', password: 'secret12' });
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  assert.ok(scripts.length > 0);
  for (const url of scripts) {
    // uPlot's own class names: in the console's chunk only.
    const text = await (await fetch(url)).text();
    assert.ok(!text.includes('u-cursor-pt'), `${url} carries the chart library`);
  }
  // Nor does the service worker, which caches the app's assets when it installs.
  const cached = await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    const scripts = [];
    for (const name of await caches.keys()) {
      const cache = await caches.open(name);
      for (const request of await cache.keys()) {
        if (request.url.endsWith('.js')) scripts.push({ url: request.url, text: await (await cache.match(request)).text() });
      }
    }
    return { count: scripts.length, charting: scripts.filter((script) => script.text.includes('u-cursor-pt')).map((script) => script.url) };
  });
  assert.ok(cached.count > 10, `the service worker cached ${cached.count} scripts`);
  assert.deepEqual(cached.charting, []);
  await context.close();
});

test('the dashboard fits a 360 px phone and a 1280 px screen, in English and Hungarian (screenshots kept)', async () => {
  for (const language of ['en-US', 'hu-HU']) {
    assert.equal((await call(admin, 'PUT', '/api/settings', { language })).status, 200);
    for (const width of [1280, 360]) {
      await admin.setViewportSize({ width, height: width === 360 ? 740 : 900 });
      // The phone's width is reached by resizing the open page: the charts must follow.
      if (width === 1280) await admin.goto('/admin');
      await admin.getByTestId('admin-chart-activity').locator('canvas').first().waitFor();
      const heading = await admin.getByRole('heading', { level: 1 }).textContent();
      assert.equal(heading, language === 'en-US' ? 'Overview' : 'Áttekintés');
      // The charts take their box's width, never more (uPlot is resized on the box's change).
      await admin.waitForFunction(() => {
        const canvases = [...document.querySelectorAll('figure canvas')];
        return (
          canvases.length >= 4 &&
          canvases.every((canvas) => canvas.getBoundingClientRect().right <= canvas.closest('figure').getBoundingClientRect().right)
        );
      });
      const overflow = await admin.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the dashboard at ${width} px in ${language} scrolls sideways by ${overflow}px`);
      await admin.screenshot({ path: join(ARTIFACTS, `admin-dashboard-${language}-${width}.png`), fullPage: true });
    }
  }
  await admin.setViewportSize({ width: 1280, height: 900 });
});
