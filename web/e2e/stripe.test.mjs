// End-to-end card payments: the built client's Stripe.js Elements card form against the real
// chat-server configured for Stripe, with localstripe standing in for Stripe (its API, its
// webhooks to our server, and its fake Stripe.js loaded from STRIPE_JS_URL).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CONFIRM_WITH_CARD_JS, confirmWithCard, missingLocalstripe, startLocalstripe } from './localstripe.mjs';
import { startServer } from './server.mjs';
import { registerThroughDialog, saveBillingInfo, phoneSignedInAs, launchChromium, dismissCookies } from './flows.mjs';

const missing = missingLocalstripe();
if (missing) {
  console.error(missing);
  process.exit(1);
}

const ARTIFACTS = join(import.meta.dirname, 'artifacts');
const SECRET_KEY = 'sk_test_e2e_chat';
const PUBLISHABLE_KEY = 'pk_test_e2e_chat';
const WEBHOOK_SECRET = 'whsec_e2e_chat';
const EMAIL = 'cara@example.com';
const PASSWORD = 'secret12';

let localstripe;
let server;
let browser;
let context;
let page;

before(async () => {
  localstripe = await startLocalstripe();
  server = await startServer({
    env: {
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_PUBLISHABLE_KEY: PUBLISHABLE_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: localstripe.url,
      STRIPE_JS_URL: localstripe.jsUrl,
    },
  });
  await localstripe.registerWebhook(`${server.url}/api/payments/stripe/webhook`, WEBHOOK_SECRET);
  browser = await launchChromium();
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  await context.exposeFunction('__localstripeConfirmWithCard', confirmWithCard(localstripe.url, SECRET_KEY));
  await context.route(localstripe.jsUrl, async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, body: (await response.text()) + CONFIRM_WITH_CARD_JS });
  });
  page = await context.newPage();
  mkdirSync(ARTIFACTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await localstripe?.stop();
});

async function register(p) {
  await p.goto('/');
  await dismissCookies(p);
  await registerThroughDialog(p, server, { name: 'Cara', email: EMAIL, password: PASSWORD });
}

/** Opens the checkout of `plan` in Settings → Subscription; the card form is loaded. */
async function openCheckout(planType) {
  // A fresh load: going to the same URL with a hash would only scroll.
  await page.goto('about:blank');
  await page.goto('/settings#subscription');
  await page.getByTestId(`choose-plan-${planType}`).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByTestId('card-element').locator('input').first().waitFor();
  return dialog;
}

/**
 * Picks the one-time payment (localstripe cannot start a monthly subscription for a customer
 * without a saved card), then types into localstripe's fake card element: plain inputs
 * named by their placeholders.
 */
async function typeCard(dialog, { number, month = '12', year = '34', cvc = '123' }) {
  await dialog.getByRole('radio', { name: /One-time payment/ }).check();
  const card = dialog.getByTestId('card-element');
  await card.getByPlaceholder('number').fill(number);
  await card.getByPlaceholder('exp_month').fill(month);
  await card.getByPlaceholder('exp_year').fill(year);
  await card.getByPlaceholder('cvc').fill(cvc);
}

const currentPlan = () => page.getByTestId('current-plan');

test('a user saves billing info, pays for Plus by card and sees the plan active in Settings', async () => {
  await register(page);
  await page.goto('/settings#subscription');
  await page.getByTestId('choose-plan-plus').click();
  // The checkout opens as soon as the billing info is saved.
  await saveBillingInfo(page, { name: 'Cara Smith', address: 'Fő utca 1', city: 'Budapest', postalCode: '1011', country: 'HU' });

  const dialog = page.getByRole('dialog');
  await dialog.getByTestId('card-element').locator('input').first().waitFor();
  assert.equal(await dialog.getByLabel('Name on card').inputValue(), 'Cara Smith');
  await typeCard(dialog, { number: '4242424242424242' });
  await dialog.getByRole('button', { name: /^Pay / }).click();

  await page.waitForURL(/\/payment-success/, { timeout: 30_000 });
  await page.getByTestId('payment-success-plan').filter({ hasText: 'Plus' }).waitFor();
  await page.goto('/settings#subscription');
  await currentPlan().filter({ hasText: /plus/i }).waitFor();
});

test('the card form fits a 360 px screen (screenshot kept as an artifact)', async () => {
  const { phone, page: p } = await phoneSignedInAs(browser, context, server);
  await p.goto('/settings#subscription');
  await p.getByTestId('choose-plan-pro').click();
  const dialog = p.getByRole('dialog');
  await dialog.getByTestId('card-element').locator('input').first().waitFor();
  const overflow = await dialog.evaluate((d) => d.scrollWidth - d.clientWidth);
  assert.ok(overflow <= 0, `the checkout dialog scrolls sideways by ${overflow}px`);
  await dialog.getByTestId('card-form').scrollIntoViewIfNeeded();
  await p.screenshot({ path: join(ARTIFACTS, 'card-form-360.png') });
  await phone.close();
});

test('a card error from the payment shows our text, and the form stays to correct it', async () => {
  const dialog = await openCheckout('pro');
  await typeCard(dialog, { number: '4242424242424242', year: '18' });
  await dialog.getByRole('button', { name: /^Pay / }).click();
  await dialog.getByTestId('card-error').filter({ hasText: 'Your card has expired' }).waitFor();
  assert.match(page.url(), /\/settings/);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
});

test('a declined card ends on the payment failed page, and the plan stays', async () => {
  const dialog = await openCheckout('pro');
  await typeCard(dialog, { number: '4000000000000341' });
  await dialog.getByRole('button', { name: /^Pay / }).click();
  await page.waitForURL(/\/payment-cancel\?.*status=failed/, { timeout: 30_000 });
  await page.getByText('Payment failed, please try again').waitFor();
  await page.goto('/settings#subscription');
  await currentPlan().filter({ hasText: /plus/i }).waitFor();
});

test('a card that asks for 3-D Secure pays once the user completes it in Stripe.js', async () => {
  const dialog = await openCheckout('pro');
  await typeCard(dialog, { number: '4000002500003155' });
  await dialog.getByRole('button', { name: /^Pay / }).click();
  // localstripe's authentication window, on the page behind our dialog.
  await page.getByRole('button', { name: 'Complete authentication' }).click();
  await page.waitForURL(/\/payment-success/, { timeout: 30_000 });
  await page.goto('/settings#subscription');
  await currentPlan().filter({ hasText: /pro/i }).waitFor();
});
