// End-to-end (issue 32, item 9): the upgrade of a user without billing info goes from the
// saved form straight to the checkout, whose "Continue to payment" shows without scrolling
// at 1280 × 800; /payment-success claims nothing without a payment. In Debian's headless
// Chromium against the real chat-server (demo payments).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { dismissCookies, launchChromium, registerOverApi, saveBillingInfo } from './flows.mjs';
import { startServer } from './server.mjs';

const SHOTS = process.env.SHOTS_DIR ?? join(import.meta.dirname, 'artifacts');

let server;
let browser;
let page;

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startServer();
  browser = await launchChromium();
  const context = await browser.newContext({ baseURL: server.url, locale: 'en-US', viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, { name: 'Cora', email: 'cora@example.com', password: 'secret12' });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('after the billing info an upgrade asks for, its checkout opens at once, the pay button in sight', async () => {
  await page.goto('/settings#subscription');
  await page.getByTestId('choose-plan-base').click();
  await page.getByTestId('billing-form').waitFor();
  await saveBillingInfo(page, { name: 'Cora Nagy', address: 'Fő utca 1.', city: 'Budapest', postalCode: '1011', country: 'HU' });

  // No second press of "Upgrade to Base".
  const checkout = page.getByRole('dialog', { name: 'Upgrade to Base' });
  await checkout.waitFor({ timeout: 10_000 });
  assert.match(await checkout.innerText(), /Cora Nagy/);
  const pay = checkout.getByRole('button', { name: 'Continue to payment' });
  const box = await pay.boundingBox();
  const dialogBox = await checkout.boundingBox();
  assert.ok(box.y >= dialogBox.y && box.y + box.height <= Math.min(dialogBox.y + dialogBox.height, 800), `the button at ${JSON.stringify(box)}`);
  await page.screenshot({ path: join(SHOTS, 'checkout-after-billing-1280.png') });

  // It goes on to the provider's page (the demo one here) as before.
  await pay.click();
  await page.waitForURL(/\/api\/payments\/demo\//, { timeout: 15_000 });
});

test('/payment-success without a payment says there is nothing to confirm', async () => {
  await page.goto('/payment-success');
  await page.getByRole('heading', { level: 1, name: 'No payment to confirm' }).waitFor();
  assert.equal(await page.getByText('Payment successful').count(), 0);
  await page.getByRole('link', { name: 'View your subscription' }).click();
  await page.waitForURL(/\/settings#subscription$/);
});
