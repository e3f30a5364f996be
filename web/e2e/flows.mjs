// What several end-to-end tests do the same way, through the UI as a person would.
import assert from 'node:assert/strict';
import { afterEach } from 'node:test';
import { chromium } from 'playwright-core';

/**
 * Registers through the landing page's dialog: fills it in, reads the mailed code from
 * the server's log and verifies. Resolves once the verification dialog has closed.
 */
export async function registerThroughDialog(page, server, { name, email, password }) {
  const mark = server.log().length;
  await page.getByTestId('landing-register').click();
  const dialog = page.getByRole('dialog', { name: 'Create an account' });
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByLabel('Email').fill(email);
  await dialog.getByLabel('Password', { exact: true }).fill(password);
  await dialog.getByLabel('Confirm password').fill(password);
  await dialog.getByRole('checkbox').check();
  await dialog.getByRole('button', { name: 'Register' }).click();
  const verify = page.getByRole('dialog', { name: 'Verify your email' });
  await verify.getByLabel('Verification code').fill(await server.codeFor(email, { after: mark }));
  await verify.getByRole('button', { name: 'Verify' }).click();
  await verify.waitFor({ state: 'hidden' });
}

/** `fetch` from the page, with its session cookie; resolves with status and JSON body. */
export function callApi(page, method, path, body) {
  return page.evaluate(
    async ([method, path, body]) => {
      const response = await fetch(path, {
        method,
        headers: body ? { 'Content-Type': 'application/json' } : {},
        body: body ? JSON.stringify(body) : undefined,
        redirect: 'manual',
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    },
    [method, path, body],
  );
}

/**
 * Registers over the API from the page, so that the session cookie is set but no tab of
 * the user has opened a socket yet: the server keeps the plan a socket's `ready` loaded
 * for up to `chat.token_recheck_secs` (60 s), and a plan set by the operator's command
 * would only land for sends after that.
 */
export async function registerOverApi(page, server, { name, email, password }) {
  const mark = server.log().length;
  const post = (path, body) =>
    page.evaluate(
      async ([path, body]) => {
        const response = await fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        return { status: response.status, body: await response.json() };
      },
      [path, body],
    );
  const sent = await post('/api/auth/register/send-code', { name, email, password, privacyAccepted: true, language: 'en-US' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const code = await server.codeFor(email, { after: mark });
  const verified = await post('/api/auth/register/verify', { token: sent.body.token, code });
  assert.equal(verified.status, 200, JSON.stringify(verified.body));
}

/** Fills in the billing info form (private buyer) and saves it. */
export async function saveBillingInfo(page, { name, address, city, postalCode, country }) {
  const billing = page.getByTestId('billing-form');
  await billing.getByLabel('Name', { exact: true }).fill(name);
  await billing.getByLabel('Address').fill(address);
  await billing.getByLabel('City').fill(city);
  await billing.getByLabel('Postal code').fill(postalCode);
  await billing.getByLabel('Country').selectOption(country);
  await page.getByTestId('billing-save').click();
}

/**
 * A 360 px wide phone context signed in as `context` (the same session token), on the
 * app's home page: the same user, seen on a small screen. The token is written by the
 * page itself before any of the app's scripts run (a cookie copied into the context
 * through the browser's protocol was sometimes not there for the page, which then showed
 * the phone signed out).
 */
export async function phoneSignedInAs(browser, context, server) {
  const { cookies, origins } = await context.storageState();
  const token = cookies.find((c) => c.name === 'token' && c.value !== '')?.value;
  assert.ok(token, 'the context to copy has a session');
  // Its local storage too (the cookie consent, so no banner covers the page).
  const items = origins.find((o) => o.origin === server.url)?.localStorage ?? [];
  const phone = await browser.newContext({ baseURL: server.url, viewport: { width: 360, height: 740 }, locale: 'en-US' });
  await phone.addInitScript(
    ([value, stored]) => {
      if (!document.cookie.split('; ').some((c) => c.startsWith('token='))) {
        document.cookie = `token=${value}; Max-Age=86400; Path=/; SameSite=Strict`;
      }
      for (const { name, value: item } of stored) {
        if (localStorage.getItem(name) === null) localStorage.setItem(name, item);
      }
    },
    [token, items],
  );
  const page = await phone.newPage();
  await page.goto('/');
  return { phone, page };
}

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Debian's Chromium, headless and quiet: no test tool downloads a browser. */
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];

/**
 * Launches Debian's headless Chromium with the common flags, plus `extraArgs`. Every
 * context it opens reports Content-Security-Policy violations (see `watchCsp`).
 */
export async function launchChromium(extraArgs = []) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...extraArgs], headless: true });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    await watchCsp(context);
    return context;
  };
  return browser;
}

/** What Chromium refused under a page's Content-Security-Policy, since the last check. */
let cspViolations = [];

/**
 * Collects every CSP violation in the context's pages and frames: a listener for
 * `securitypolicyviolation` runs before any of the page's own scripts, and Chromium's
 * console message for a violation (which workers log too) counts as well.
 */
async function watchCsp(context) {
  await context.exposeBinding('__cspViolation', ({ frame }, violation) => {
    cspViolations.push({ page: frame.url(), ...violation });
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      window.__cspViolation?.({
        directive: event.effectiveDirective,
        blocked: event.blockedURI,
        source: `${event.sourceFile}:${event.lineNumber}`,
        sample: event.sample,
      });
    });
  });
  const watchPage = (page) =>
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push({ page: page.url(), console: message.text() });
    });
  context.pages().forEach(watchPage);
  context.on('page', watchPage);
}

/** Answers the violations collected so far and forgets them. */
export function takeCspViolations() {
  const taken = cspViolations;
  cspViolations = [];
  return taken;
}

/** Fails when Chromium reported any CSP violation since the last check. */
export function assertNoCspViolations() {
  const violations = takeCspViolations();
  assert.deepEqual(violations, [], `Content-Security-Policy violations:\n${JSON.stringify(violations, null, 2)}`);
}

// Every test of every file that uses these helpers fails on a violation it caused.
afterEach(() => assertNoCspViolations());

/** Accepts the cookie banner if it is showing. */
export async function dismissCookies(page) {
  const accept = page.getByTestId('cookie-accept-all');
  if (await accept.isVisible().catch(() => false)) await accept.click();
}
