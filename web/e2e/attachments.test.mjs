// End-to-end: image attachments, from the pick to the answer and to a second tab, in
// Debian's headless Chromium against the real chat-server (see app.test.mjs). Chromium's
// fake camera stands in for a webcam.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { join } from 'node:path';
import { encodePng } from '../scripts/png.mjs';
import { startServer } from './server.mjs';
import { registerThroughDialog, phoneSignedInAs, launchChromium, dismissCookies } from './flows.mjs';

// A generated test picture instead of a camera, and no permission prompt.
const FAKE_CAMERA = ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'];
const ARTIFACTS = join(import.meta.dirname, 'artifacts');
const EMAIL = 'iris@example.com';
const PASSWORD = 'secret12';

/** A real PNG of `width` × `height`: a gradient, so it is no blank the server might treat oddly. */
function makePng(width, height) {
  const rgba = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) rgba.set([(x * 4) & 0xff, (y * 5) & 0xff, 160, 255], (y * width + x) * 4);
  }
  return encodePng(width, height, rgba);
}

const pngFile = (name, width = 64, height = 48) => ({ name, mimeType: 'image/png', buffer: makePng(width, height) });
const CAT = /^cat\.(png|jpg)$/;

let server;
let browser;
let context;
let page;

before(async () => {
  server = await startServer();
  browser = await launchChromium(FAKE_CAMERA);
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  page = await context.newPage();
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.goto('/');
  await dismissCookies(page);
  await registerThroughDialog(page, server, { name: 'Iris', email: EMAIL, password: PASSWORD });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Resolves once the image has loaded (the server served it to this session) and returns its size. */
async function loaded(image) {
  await image.waitFor();
  await image.evaluate((img) => (img.complete ? undefined : new Promise((r, f) => {
    img.addEventListener('load', r, { once: true });
    img.addEventListener('error', () => f(new Error(`${img.src} did not load`)), { once: true });
  })));
  return image.evaluate((img) => ({ src: img.getAttribute('src'), width: img.naturalWidth, height: img.naturalHeight }));
}

const ready = (p) => p.locator('[data-testid="attachment-preview"][data-status="ready"]');

test('an image picked from Photos is uploaded, sent alone, described by the demo model and shown in a second tab', async () => {
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  await page.getByTestId('attach-button').click();
  await page.getByTestId('attach-menu').waitFor();
  const chooser = page.waitForEvent('filechooser');
  await page.getByTestId('attach-photos').click();
  await (await chooser).setFiles(pngFile('cat.png'));

  await ready(page).waitFor({ timeout: 15_000 });
  await loaded(ready(page).getByRole('img', { name: 'cat.png' }));
  await page.getByTestId('send-button').click();

  // The preview went with the message; the server's thumbnail replaces it.
  await page.getByTestId('attachment-preview').waitFor({ state: 'detached' });
  await page.waitForURL(/\/chat\/.+/);
  const sent = page.getByTestId('message-user').last();
  // The server names the file as it stored it (an opaque PNG may be kept as a JPEG).
  const thumbnail = sent.getByRole('img', { name: CAT });
  await sent.locator('img[src$="/thumbnail"]').waitFor({ timeout: 15_000 });
  const shown = await loaded(thumbnail);
  assert.match(shown.src, /^\/api\/files\/[^/]+\/thumbnail$/);
  assert.ok(shown.width > 0 && shown.height > 0);
  assert.deepEqual([await thumbnail.getAttribute('width'), await thumbnail.getAttribute('height')], ['64', '48']);

  const reply = page.getByTestId('message-assistant').last();
  await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  assert.match(await reply.innerText(), /I received 1 image: cat\.(png|jpg) \(64×48\)/);

  // A click opens the full image in the lightbox.
  await sent.getByRole('link', { name: /^Open cat\./ }).click();
  const lightbox = page.getByRole('dialog', { name: CAT });
  const full = await loaded(lightbox.getByTestId('lightbox-image'));
  assert.match(full.src, /^\/api\/files\/[^/]+$/);
  await lightbox.getByRole('button', { name: 'Close' }).click();

  // A second tab loads the conversation with its image...
  const second = await context.newPage();
  await second.goto(page.url());
  await loaded(second.getByTestId('message-user').first().getByRole('img', { name: CAT }));

  // ...and receives the next one live, with the text beside it.
  await page.getByTestId('attach-photos-input').setInputFiles(pngFile('dog.png', 30, 20));
  await ready(page).waitFor({ timeout: 15_000 });
  await page.getByTestId('composer-input').fill('And this one?');
  await page.getByTestId('send-button').click();
  const mirrored = second.getByTestId('message-user').nth(1);
  await loaded(mirrored.getByRole('img', { name: /^dog\.(png|jpg)$/ }));
  assert.match(await mirrored.innerText(), /And this one\?/);
  const answer = second.getByTestId('message-assistant').nth(1);
  await answer.and(second.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  assert.match(await answer.innerText(), /I received 1 image: dog\.(png|jpg) \(30×20\)/);
  await second.close();
});

test('the free plan takes one image a message: a second is refused with {max}, and a removed one is deleted', async () => {
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  await page.getByTestId('attach-photos-input').setInputFiles([pngFile('one.png'), pngFile('two.png')]);
  const refusal = page.getByTestId('attachment-refusal');
  await refusal.waitFor();
  assert.equal(await refusal.innerText(), 'You can attach at most 1 images to a message');
  await ready(page).waitFor({ timeout: 15_000 });
  assert.equal(await page.getByTestId('attachment-preview').count(), 1);
  const id = await ready(page).getAttribute('data-file-id');
  assert.ok(id);

  const deleted = page.waitForResponse((r) => r.url().endsWith(`/api/files/${id}`) && r.request().method() === 'DELETE');
  await page.getByRole('button', { name: 'Remove one.png' }).click();
  assert.equal((await deleted).status(), 200);
  assert.equal(await page.getByTestId('attachment-preview').count(), 0);
  const gone = await page.evaluate((path) => fetch(path).then((r) => r.status), `/api/files/${id}`);
  assert.equal(gone, 404);
});

test('the camera takes a photo that is attached like a picked one', async () => {
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  await page.getByTestId('attach-button').click();
  await page.getByTestId('attach-camera').click();
  const dialog = page.getByRole('dialog', { name: 'Take a photo' });
  await dialog.waitFor();
  const capture = dialog.getByTestId('camera-capture');
  await page.waitForFunction(() => {
    const button = document.querySelector('[data-testid="camera-capture"]');
    return button !== null && !button.disabled;
  }, null, { timeout: 15_000 });
  await capture.click();
  await dialog.waitFor({ state: 'hidden' });
  // The camera is off again once the dialog is gone.
  assert.equal(await page.locator('video').count(), 0);
  await ready(page).waitFor({ timeout: 15_000 });
  assert.match(await ready(page).getByRole('img').getAttribute('alt'), /^photo-.+\.jpg$/);
  await page.getByTestId('attachment-remove').click();
});

test('a HEIC photo is converted to JPEG before upload; an unreadable one says so', async () => {
  await page.goto('/chat');
  await page.getByTestId('composer-input').waitFor();
  // e2e/fixtures/photo.heic: the 64 × 48 gradient of makePng, by libheif's heif-enc -q 60.
  // Browsers give HEIC no type; the name tells.
  const heic = readFileSync(join(import.meta.dirname, 'fixtures', 'photo.heic'));
  await page.getByTestId('attach-photos-input').setInputFiles({ name: 'IMG_0001.HEIC', mimeType: '', buffer: heic });
  await ready(page).waitFor({ timeout: 30_000 });
  const preview = await loaded(ready(page).getByRole('img', { name: 'IMG_0001.jpg' }));
  assert.deepEqual([preview.width, preview.height], [64, 48]);
  await page.getByRole('button', { name: 'Remove IMG_0001.jpg' }).click();

  await page.getByTestId('attach-photos-input').setInputFiles({
    name: 'broken.heic',
    mimeType: 'image/heic',
    buffer: Buffer.from('not a HEIC image at all'),
  });
  const error = page.getByTestId('attachment-error');
  await error.waitFor({ timeout: 30_000 });
  assert.equal(await error.innerText(), 'broken.heic could not be attached: HEIC image conversion error');
  await page.getByRole('button', { name: 'Remove broken.heic' }).click();
});

test('a dropped image is attached, and the composer with a preview fits 360 px (screenshot kept)', async () => {
  const { phone, page: p } = await phoneSignedInAs(browser, context, server);
  await p.goto('/chat');
  await p.getByTestId('composer-input').waitFor();

  // A drop as the browser delivers it: a DataTransfer with the file.
  const bytes = [...makePng(48, 48)];
  const transfer = await p.evaluateHandle((data) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(data)], 'dropped.png', { type: 'image/png' }));
    return dt;
  }, bytes);
  const view = p.getByTestId('conversation-view');
  await view.dispatchEvent('dragenter', { dataTransfer: transfer });
  await p.getByTestId('drop-overlay').waitFor();
  await view.dispatchEvent('drop', { dataTransfer: transfer });
  await p.getByTestId('drop-overlay').waitFor({ state: 'detached' });
  await ready(p).waitFor({ timeout: 15_000 });
  await p.getByTestId('composer-input').fill('A picture from my phone');

  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  await p.screenshot({ path: join(ARTIFACTS, 'attachments-360.png'), fullPage: true });
  await p.getByTestId('send-button').click();
  await loaded(p.getByTestId('message-user').last().getByRole('img', { name: /^dropped\.(png|jpg)$/ }));
  await p.getByTestId('attach-button').click();
  await p.getByTestId('attach-menu').waitFor();
  await p.screenshot({ path: join(ARTIFACTS, 'attachments-360-sent.png'), fullPage: true });
  await phone.close();
});
