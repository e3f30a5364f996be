// End-to-end: the operator console. An admin (made on the command line) finds a paying
// user, changes their plan while the user's tab follows, refunds the payment and sees the
// credit note, suspends the account (the user's tab signs out and says why, login is
// refused) and lifts it; the audit log shows every action. A user who is not an admin
// gets the not-found page at /admin. A server and browser of its own.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { callApi as call, dismissCookies, launchChromium, registerOverApi } from './flows.mjs';

const ADMIN = { name: 'Ada Root', email: 'ada@example.com', password: 'secret12' };
const USER = { name: 'Bea Buyer', email: 'bea@example.com', password: 'secret12' };

const ARTIFACTS = join(import.meta.dirname, 'artifacts');

let server;
let browser;
let admin;
let user;

async function signedInPage(person) {
  const context = await browser.newContext({ baseURL: server.url, locale: 'en-US', viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, person);
  return page;
}

/** Fills a console action's dialog: its reason, then submits. */
async function confirmWithReason(page, dialogTestId, reason) {
  const dialog = page.getByTestId(dialogTestId);
  await dialog.waitFor();
  const submit = dialog.getByTestId('admin-dialog-submit');
  // The reason is required: nothing goes without one.
  assert.equal(await submit.isDisabled(), true);
  await dialog.getByTestId('admin-reason').fill(reason);
  await submit.click();
  await dialog.waitFor({ state: 'hidden' });
}

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer();
  browser = await launchChromium();
  admin = await signedInPage(ADMIN);
  user = await signedInPage(USER);
  await server.cli(['users', 'grant-admin', ADMIN.email]);

  // Bea buys Base with the demo provider.
  const billing = { billingType: 'private', billingInfo: { name: USER.name, address: 'Fő utca 1', city: 'Budapest', postalCode: '1011', country: 'HU' } };
  assert.equal((await call(user, 'PUT', '/api/settings/billing-info', billing)).status, 200);
  const started = await call(user, 'PUT', '/api/subscription/change', { planType: 'base', currency: 'EUR' });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const paid = await call(user, 'POST', `/api/payments/demo/${started.body.payment._id}/pay`);
  assert.ok([0, 303].includes(paid.status), `paying answered ${paid.status}`);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('a user who is not an admin gets the not-found page at /admin, and no menu entry', async () => {
  await user.goto('/admin');
  await user.getByRole('heading', { name: 'Page not found' }).waitFor();
  await user.goto('/chat');
  await user.getByRole('button', { name: `Account menu for ${USER.name}` }).click();
  // The menu is open: it shows her e-mail, and no console.
  await user.getByText(USER.email).waitFor();
  assert.equal(await user.getByTestId('user-menu-admin').count(), 0);
  await user.keyboard.press('Escape');
});

test('an admin finds a user, changes the plan (the user’s tab follows), refunds, suspends and lifts it', async () => {
  await user.goto('/settings#subscription');
  await user.getByTestId('current-plan').filter({ hasText: /base/i }).waitFor();

  // From the profile menu to the console's overview, then to the users table; the search
  // finds Bea by her e-mail's start.
  await admin.goto('/chat');
  await admin.getByRole('button', { name: `Account menu for ${ADMIN.name}` }).click();
  await admin.getByTestId('user-menu-admin').click();
  await admin.waitForURL(/\/admin$/);
  await admin.getByTestId('admin-dashboard').waitFor();
  await admin.getByTestId('admin-nav-users').click();
  await admin.waitForURL(/\/admin\/users$/);
  await admin.getByTestId('admin-users-search').fill('BEA');
  // The search runs once typing pauses: then Bea's row is the only one.
  await admin.waitForFunction(() => document.querySelectorAll('[data-testid="admin-user-row"]').length === 1);
  const row = admin.locator(`[data-testid="admin-user-row"][data-email="${USER.email}"]`);
  await row.waitFor();
  await row.getByTestId('admin-user-link').click();
  await admin.getByTestId('admin-user-page').waitFor();
  await admin.getByTestId('admin-user-plan-type').filter({ hasText: /base/i }).waitFor();

  // A plan change: Bea's open tab shows Plus without a reload.
  await admin.getByTestId('admin-change-plan').click();
  await admin.getByTestId('admin-plan-select').selectOption('plus');
  await admin.getByTestId('admin-plan-days').fill('14');
  await confirmWithReason(admin, 'admin-plan-dialog', 'Support ticket 4411: trial of Plus');
  await admin.getByTestId('admin-user-plan-type').filter({ hasText: /plus/i }).waitFor();
  await user.getByTestId('current-plan').filter({ hasText: /plus/i }).waitFor();

  // A full refund of the payment: the credit note is listed, negative, referring to the invoice.
  const payment = admin.getByTestId('admin-payment-row').first();
  await payment.getByTestId('admin-refund').click();
  await confirmWithReason(admin, 'admin-refund-dialog', 'Charged twice by mistake');
  const note = admin.locator('[data-testid="admin-invoice-row"][data-kind="credit_note"]');
  await note.waitFor();
  const invoiceNumber = await admin.locator('[data-testid="admin-invoice-row"][data-kind="invoice"]').getAttribute('data-number');
  const noteText = (await note.textContent()).replace(/\s+/g, ' ');
  assert.match(noteText, new RegExp(`Refers to invoice ${invoiceNumber}`));
  assert.match(noteText, /-€6\.35/);
  await payment.getByTestId('admin-payment-refunded').filter({ hasText: '€6.35' }).waitFor();
  // Bea sees it in her own invoices.
  await user.reload();
  await user.getByTestId('invoices').getByTestId('credit-note').waitFor();

  // Suspension: Bea's tab signs out at once and says why; her login is refused.
  await admin.getByTestId('admin-suspend').click();
  await confirmWithReason(admin, 'admin-suspend-dialog', 'Abuse report 77');
  await admin.getByTestId('admin-user-status').filter({ hasText: /suspended/i }).waitFor();
  const login = user.getByRole('dialog', { name: 'Log in' });
  await login.getByText('This account is suspended. Please contact support.').waitFor();
  await login.getByLabel('Email').fill(USER.email);
  await login.getByLabel('Password', { exact: true }).fill(USER.password);
  await login.getByRole('button', { name: 'Log in' }).click();
  await login.getByRole('alert').filter({ hasText: 'This account is suspended. Please contact support.' }).waitFor();

  // Lifted: she logs in again.
  await admin.getByTestId('admin-suspend').click();
  await confirmWithReason(admin, 'admin-suspend-dialog', 'Resolved with the user');
  await admin.getByTestId('admin-user-status').filter({ hasText: /active/i }).waitFor();
  await login.getByRole('button', { name: 'Log in' }).click();
  await login.waitFor({ state: 'hidden' });

  // The audit log has each action, newest first, with its reason.
  await admin.getByTestId('admin-user-audit-link').click();
  await admin.waitForURL(/\/admin\/audit\?userId=/);
  // The log's page (the user's page, with the same rows in a card, may stay while the
  // log's code loads): its filter says whose actions it shows.
  await admin.getByTestId('admin-audit-filter').waitFor();
  const log = admin.getByTestId('admin-audit-table');
  await log.getByTestId('admin-audit-row').nth(3).waitFor();
  const actions = await log.getByTestId('admin-audit-row').evaluateAll((rows) => rows.map((r) => r.dataset.action));
  assert.deepEqual(actions, ['user.unsuspended', 'user.suspended', 'payment.refunded', 'plan.changed']);
  await admin.getByTestId('admin-audit-table').getByText('Charged twice by mistake').waitFor();
});

test('the console fits a 360 px phone and a 1280 px screen, in English and Hungarian (screenshots kept)', async () => {
  for (const language of ['en-US', 'hu-HU']) {
    assert.equal((await call(admin, 'PUT', '/api/settings', { language })).status, 200);
    for (const width of [1280, 360]) {
      await admin.setViewportSize({ width, height: width === 360 ? 740 : 900 });
      for (const [name, path, ready] of [
        ['users', '/admin/users', 'admin-user-row'],
        ['user', '/admin/users', 'admin-invoice-row'],
        ['audit', '/admin/audit', 'admin-audit-row'],
      ]) {
        await admin.goto(path);
        if (name === 'user') {
          await admin.locator(`[data-testid="admin-user-row"][data-email="${USER.email}"]`).getByTestId('admin-user-link').click();
        }
        await admin.getByTestId(ready).first().waitFor();
        const overflow = await admin.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${name} at ${width} px in ${language} scrolls sideways by ${overflow}px`);
        await admin.screenshot({ path: join(ARTIFACTS, `admin-${name}-${language}-${width}.png`), fullPage: true });
      }
    }
  }
  await admin.setViewportSize({ width: 1280, height: 900 });
});
