// End-to-end: maths, Mermaid diagrams and the code blocks' copy button in an answer, in
// Debian's headless Chromium against the real chat-server (see app.test.mjs) and under
// its Content-Security-Policy (flows.mjs fails every test that caused a violation).
//
// The model is a small OpenAI-compatible stub in this process: it streams, in small
// pieces, the answer that the question names (`ANSWERS`), so the page gets the Markdown
// the way a model sends it. Screenshots (1280 and 360 px, en-US and hu-HU) go to
// SHOTS_DIR, or to the artifacts folder.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, startServer } from './server.mjs';
import { dismissCookies, launchChromium, phoneSignedInAs, registerOverApi } from './flows.mjs';

const SHOTS = process.env.SHOTS_DIR ?? join(import.meta.dirname, 'artifacts');
const JS_CODE = 'const total = [1, 2, 3].reduce((sum, n) => sum + n, 0);\nconsole.log(`total: ${total}`);';

const ANSWERS = {
  'show me everything': [
    'Mass and energy: $E=mc^2$, and it costs $5 and $10 to print.',
    '',
    'Pythagoras:',
    '',
    '\\[a^2+b^2=c^2\\]',
    '',
    'A long one, which scrolls on a phone:',
    '',
    '$$\\sum_{k=1}^{n} k^3 = \\left(\\frac{n(n+1)}{2}\\right)^2 = \\frac{n^2(n+1)^2}{4} = 1^3 + 2^3 + 3^3 + \\cdots + n^3$$',
    '',
    'The flow:',
    '',
    '```mermaid',
    'flowchart LR',
    '  Q[Question] --> M{Has maths?}',
    '  M -->|yes| K[KaTeX as MathML]',
    '  M -->|no| T[Plain text]',
    '  K --> A[Answer]',
    '  T --> A',
    '```',
    '',
    'And the code:',
    '',
    '```js',
    JS_CODE,
    '```',
  ].join('\n'),
  'a broken diagram': ['This one is wrong, and so is $\\frac{1}{$:', '', '```mermaid', 'flowchart TD', '  A -->', '  --> B ]]', '```', '', 'The end.'].join('\n'),
};

/** The stub's answer to a streamed completion: the text its last user turn names. */
function answerFor(body) {
  const last = body.messages?.filter((m) => m.role === 'user').at(-1);
  const text = typeof last?.content === 'string' ? last.content : (last?.content ?? []).map((p) => p.text ?? '').join('');
  const key = Object.keys(ANSWERS).find((k) => text.includes(k));
  return key ? ANSWERS[key] : 'I have nothing to show for that.';
}

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-stub',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'stub',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;

async function startModelStub() {
  const port = await freePort();
  const http = createServer((request, response) => {
    let raw = '';
    request.on('data', (part) => (raw += part));
    request.on('end', async () => {
      if (request.method !== 'POST' || !request.url.endsWith('/chat/completions')) {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw);
      if (body.stream !== true) {
        // The conversation's title.
        response.writeHead(200, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-stub',
            object: 'chat.completion',
            created: 1,
            model: 'stub',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Markdown' }, finish_reason: 'stop' }],
          }),
        );
        return;
      }
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const text = answerFor(body);
      // Small pieces, a little apart: the page renders the answer while it streams.
      for (let i = 0; i < text.length; i += 24) {
        response.write(chunk({ content: text.slice(i, i + 24) }));
        await new Promise((r) => setTimeout(r, 15));
      }
      response.write(chunk({}, 'stop'));
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise((ok) => http.listen(port, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((ok) => {
        http.closeAllConnections();
        http.close(ok);
      }),
  };
}

let stub;
let server;
let browser;
let context;
let page;

before(async () => {
  stub = await startModelStub();
  server = await startServer({
    env: { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: stub.url, OPENAI_EMBEDDINGS: 'false' },
  });
  browser = await launchChromium();
  context = await browser.newContext({
    baseURL: server.url,
    locale: 'en-US',
    viewport: { width: 1280, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  page = await context.newPage();
  mkdirSync(SHOTS, { recursive: true });
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, { name: 'Max', email: 'max@example.com', password: 'secret12' });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await stub?.close();
});

/** Sends `text` in a new chat; resolves with the completed answer. */
async function ask(p, text) {
  await p.goto('/chat');
  await p.getByTestId('composer-input').fill(text);
  await p.getByTestId('send-button').click();
  const answer = p.getByTestId('message-assistant').last();
  await answer.and(p.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  return answer;
}

let conversationUrl;

test('maths is typeset as MathML, prices stay text, and the diagram is drawn as an image', async () => {
  const answer = await ask(page, 'show me everything');
  conversationUrl = page.url();
  // Three formulas: $E=mc^2$, \[…\] and $$…$$; the two dollar prices are text.
  assert.equal(await answer.locator('math').count(), 3);
  assert.equal(await answer.locator('math[display="block"]').count(), 2);
  assert.match(await answer.innerText(), /costs \$5 and \$10 to print/);
  assert.equal(await answer.locator('annotation').first().textContent(), 'E=mc^2');
  // MathML laid out by the browser: the formula has a size.
  const box = await answer.locator('math').first().boundingBox();
  assert.ok(box && box.width > 20 && box.height > 8, `the formula is laid out: ${JSON.stringify(box)}`);

  const diagram = answer.locator('[data-mermaid="drawn"] img');
  await diagram.waitFor({ timeout: 30_000 });
  const image = await diagram.evaluate(async (img) => {
    await img.decode();
    return { src: img.getAttribute('src').slice(0, 40), natural: img.naturalWidth, alt: img.alt, shown: img.getBoundingClientRect().width };
  });
  assert.match(image.src, /^data:image\/svg\+xml/);
  assert.ok(image.natural > 0, 'the SVG image loaded');
  assert.ok(image.shown > 100, 'the diagram is shown at a useful size');
  assert.equal(image.alt, 'Diagram');
  // Its source is kept (hidden) for the copy button, not shown beside the picture.
  assert.equal(await answer.locator('[data-mermaid="drawn"] pre').isHidden(), true);
  // The labels are in the picture: Mermaid measured them with its styles applied.
  const svg = decodeURIComponent(await diagram.evaluate((img) => img.src.split(',')[1]));
  const text = svg.replace(/<style>[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, '');
  for (const label of ['Question', 'Has maths?', 'KaTeX as MathML', 'Plain text', 'Answer']) assert.ok(text.includes(label), label);
  assert.match(svg, /<style>/);
});

test('a code block copies its code (not its language) with a button, from the keyboard too', async () => {
  await page.goto(conversationUrl);
  const answer = page.getByTestId('message-assistant').last();
  const block = answer.locator('.code-block').filter({ has: page.locator('pre[data-language="js"]') });
  const button = block.getByRole('button', { name: 'Copy code' });
  await button.click();
  await block.getByRole('button', { name: 'Copied' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), JS_CODE);
  assert.equal(await block.getByRole('status').textContent(), 'The code is on the clipboard.');
  // Back to "Copy" after about two seconds.
  await block.getByRole('button', { name: 'Copy code' }).waitFor({ timeout: 4000 });

  // The keyboard: the diagram's button is a real button, focused and pressed with Enter.
  await page.evaluate(() => navigator.clipboard.writeText(''));
  const diagramButton = answer.locator('[data-mermaid="drawn"]').getByRole('button', { name: 'Copy code' });
  await diagramButton.focus();
  await page.keyboard.press('Enter');
  await answer.locator('[data-mermaid="drawn"]').getByRole('button', { name: 'Copied' }).waitFor();
  assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^flowchart LR\n {2}Q\[Question\]/);
});

test('a broken diagram shows its source and a short error line', async () => {
  const answer = await ask(page, 'a broken diagram');
  const block = answer.locator('[data-mermaid="error"]');
  await block.waitFor({ timeout: 30_000 });
  assert.equal(await block.locator('pre').isVisible(), true);
  assert.match(await block.locator('pre').innerText(), /A -->/);
  assert.equal(await block.getByText('The diagram could not be drawn; here is its source.').isVisible(), true);
  assert.equal(await block.locator('img').count(), 0);
  assert.match(await answer.innerText(), /The end\./);
  // A formula KaTeX cannot read shows its source, coloured as an error by the stylesheet.
  const formula = answer.locator('.katex-error');
  assert.equal(await formula.textContent(), '\\frac{1}{');
  assert.equal(await formula.evaluate((el) => el.hasAttribute('style')), false);
  await answer.screenshot({ path: join(SHOTS, 'markdown-broken-1280-en-US.png') });
});

/** The conversation with everything, screenshotted in `p` as `name`; nothing overflows. */
async function shoot(p, name) {
  await p.goto(conversationUrl);
  const answer = p.getByTestId('message-assistant').first();
  await answer.locator('[data-mermaid="drawn"] img').waitFor({ timeout: 30_000 });
  await answer.locator('[data-mermaid="drawn"] img').evaluate((img) => img.decode());
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name}: the page scrolls sideways by ${overflow}px`);
  // Whatever is wider than the bubble scrolls inside it.
  const bubble = await answer.boundingBox();
  for (const wide of await answer.locator('.math-display, [data-mermaid="drawn"] > div, pre:visible').all()) {
    const box = await wide.boundingBox();
    assert.ok(box.x + box.width <= bubble.x + bubble.width + 1, `${name}: a block sticks out of the bubble`);
  }
  // Tall enough for the whole conversation, header included.
  const { width } = p.viewportSize();
  await p.setViewportSize({ width, height: width < 600 ? 1900 : 1250 });
  await answer.evaluate((el) => el.scrollIntoView({ block: 'end' }));
  await p.screenshot({ path: join(SHOTS, `${name}.png`) });
  await p.setViewportSize({ width, height: width < 600 ? 740 : 900 });
}

test('screenshots at 1280 and 360 px, in English and Hungarian', async () => {
  await shoot(page, 'markdown-1280-en-US');
  const { phone, page: small } = await phoneSignedInAs(browser, context, server);
  await shoot(small, 'markdown-360-en-US');

  await page.goto('/settings');
  await page.getByTestId('settings-language').selectOption('hu-HU');
  await page.getByRole('link', { name: 'Beállítások' }).first().waitFor();
  await shoot(page, 'markdown-1280-hu-HU');
  const answer = page.getByTestId('message-assistant').first();
  assert.equal(await answer.getByRole('button', { name: 'Kód másolása' }).count(), 2);
  assert.equal(await answer.locator('[data-mermaid="drawn"] img').getAttribute('alt'), 'Ábra');
  await small.reload();
  await small.waitForFunction(() => document.documentElement.lang === 'hu-HU');
  await shoot(small, 'markdown-360-hu-HU');

  await page.goto('/settings');
  await page.getByTestId('settings-language').selectOption('en-US');
  await page.getByRole('link', { name: 'Settings' }).first().waitFor();
  await phone.close();
});
