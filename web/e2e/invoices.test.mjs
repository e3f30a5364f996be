// End-to-end: a buyer pays with the demo provider, sees the plan active and their
// invoice, and downloads the invoice as a PDF. A server and browser of its own, so it
// does not depend on the order of the other end-to-end tests.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { startServer } from './server.mjs';
import { registerThroughDialog, saveBillingInfo, launchChromium, dismissCookies } from './flows.mjs';

const EMAIL = 'buyer@example.com';
const PASSWORD = 'secret12';

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launchChromium();
  const context = await browser.newContext({ baseURL: server.url, locale: 'en-US', acceptDownloads: true });
  page = await context.newPage();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('a buyer pays, sees the plan active and downloads the invoice as a PDF', async () => {
  await page.goto('/');
  await dismissCookies(page);

  // Plan cards on the landing page offer only what works.
  const pro = page.getByTestId('plan-summary-pro');
  await pro.waitFor();
  const card = await pro.textContent();
  assert.match(card, /Coming soon \(not available yet\):.*Web search/);
  // Projects are built: sold as working, not as coming soon.
  assert.match(card.split('Coming soon')[0], /Projects/);
  assert.doesNotMatch(card.split('Coming soon')[1], /Projects/);

  await registerThroughDialog(page, server, { name: 'Kővári Űrsula', email: EMAIL, password: PASSWORD });

  // Billing info first: a German private buyer pays German VAT.
  await page.goto('/settings#subscription');
  await page.getByTestId('choose-plan-base').click();
  await saveBillingInfo(page, {
    name: 'Kővári Űrsula',
    address: 'Hauptstraße 1',
    city: 'Berlin',
    postalCode: '10115',
    country: 'DE',
  });
  await page.getByTestId('billing-vat').filter({ hasText: 'VAT 19%' }).waitFor();
  await page.getByTestId('plan-card-base').filter({ hasText: '+ 19% VAT' }).waitFor();

  // The checkout opened as soon as the billing info was saved, with the German VAT.
  await page.getByRole('dialog', { name: 'Upgrade to Base' }).filter({ hasText: 'VAT (19%)' }).waitFor();
  await page.getByTestId('confirm-dialog-confirm').click();
  await page.waitForURL(/\/api\/payments\/demo\//, { timeout: 15_000 });
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.waitForURL(/\/payment-success/, { timeout: 15_000 });

  await page.goto('/settings#subscription');
  await page.getByTestId('current-plan').filter({ hasText: /base/i }).waitFor();
  const invoices = page.getByTestId('invoices');
  const row = invoices.getByRole('row').filter({ hasText: /^\d{4}-000001/ });
  await row.waitFor();
  const text = (await row.textContent()).replace(/\s+/g, ' ');
  assert.match(text, /Base/);
  assert.match(text, /€5\.95/);

  const [download] = await Promise.all([page.waitForEvent('download'), row.getByTestId('invoice-download').click()]);
  assert.match(download.suggestedFilename(), /^invoice-\d{4}-000001\.pdf$/);
  const pdf = await readFile(await download.path());
  assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
});
