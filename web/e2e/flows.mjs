// What several end-to-end tests do the same way, through the UI as a person would.
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
 * A 360 px wide phone context signed in as `context` (its cookies and local storage), on
 * the app's home page: the same user, seen on a small screen.
 */
export async function phoneSignedInAs(browser, context, server) {
  const phone = await browser.newContext({ baseURL: server.url, viewport: { width: 360, height: 740 }, locale: 'en-US' });
  const storage = await context.storageState();
  await phone.addCookies(storage.cookies);
  const page = await phone.newPage();
  await page.goto('/');
  await page.evaluate((items) => {
    for (const { name, value } of items) localStorage.setItem(name, value);
  }, storage.origins.find((o) => o.origin === server.url)?.localStorage ?? []);
  return { phone, page };
}

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Debian's Chromium, headless and quiet: no test tool downloads a browser. */
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];

/** Launches Debian's headless Chromium with the common flags, plus `extraArgs`. */
export function launchChromium(extraArgs = []) {
  return chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...extraArgs], headless: true });
}

/** Accepts the cookie banner if it is showing. */
export async function dismissCookies(page) {
  const accept = page.getByTestId('cookie-accept-all');
  if (await accept.isVisible().catch(() => false)) await accept.click();
}
