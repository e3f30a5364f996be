// End-to-end: web search and deep search, from the composer's toggles through the
// server's searching and reading to an answer that cites its web sources, in every tab,
// in Debian's headless Chromium against the real chat-server (see app.test.mjs).
//
// The web is two small servers in this process: a stub SearXNG answering
// `GET /search?q=…&format=json` with one result, and the page that result points at.
// The page answers after a pause, so that the progress line ("Reading 1 page") stays up
// long enough to be seen. The server may fetch it (a private address) only because the
// test names it in SEARCH_FETCH_ALLOW. The demo model quotes the page's best-matching
// sentence and cites it as [1]; a deep search's report starts with a `# ` heading.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort, startServer } from './server.mjs';
import { dismissCookies, launchChromium, phoneSignedInAs, registerOverApi } from './flows.mjs';

const ARTIFACTS = join(import.meta.dirname, 'artifacts');
const PASSWORD = 'secret12';
const CODE = 'LIGHTHOUSE-77';
const PAGE_DELAY_MS = 1500;

/** An article: the answer to the question among paragraphs about other things. */
const ARTICLE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>The lighthouse page</title></head>
<body>
<article>
<h1>The lighthouse on the northern cape</h1>
<p>The lighthouse was built in 1874 from granite quarried on the island, and its lamp can be seen thirty kilometres out to sea.</p>
<p>Every evening the keeper climbs the hundred and twelve steps to light the lamp and wind the clockwork that turns the lens.</p>
<p>The keeper's code is ${CODE}. It opens the iron door at the foot of the tower.</p>
<p>In winter storms the waves reach the gallery, and the keeper writes the wind speed in the logbook every hour.</p>
<p>Visitors may climb the tower on Sundays in summer, when the keeper tells the story of the great wreck of 1903.</p>
</article>
</body>
</html>
`;

/** One server, its requests kept for the assertions; closed with `close()`. */
async function listen(handler) {
  const port = await freePort();
  const requests = [];
  const http = createServer((request, response) => {
    requests.push(request.url);
    handler(request, response);
  });
  await new Promise((ok) => http.listen(port, '127.0.0.1', ok));
  return {
    port,
    requests,
    close: () =>
      new Promise((ok) => {
        http.closeAllConnections();
        http.close(ok);
      }),
  };
}

let pages;
let searx;
let server;
let browser;
let context;
let page;
let pageUrl;

before(async () => {
  pages = await listen((request, response) => {
    if (new URL(request.url, 'http://x').pathname !== '/lighthouse.html') {
      response.writeHead(404).end();
      return;
    }
    setTimeout(() => response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(ARTICLE), PAGE_DELAY_MS);
  });
  pageUrl = `http://127.0.0.1:${pages.port}/lighthouse.html`;
  searx = await listen((request, response) => {
    const url = new URL(request.url, 'http://x');
    if (url.pathname !== '/search' || url.searchParams.get('format') !== 'json' || !url.searchParams.get('q')) {
      response.writeHead(400).end();
      return;
    }
    response.writeHead(200, { 'Content-Type': 'application/json' }).end(
      JSON.stringify({ results: [{ url: pageUrl, title: 'The lighthouse page', content: 'snippet text' }] }),
    );
  });
  server = await startServer({
    env: { SEARXNG_URL: `http://127.0.0.1:${searx.port}`, SEARCH_FETCH_ALLOW: `127.0.0.1:${pages.port}` },
  });
  browser = await launchChromium();
  context = await browser.newContext({ baseURL: server.url, locale: 'en-US' });
  page = await context.newPage();
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.goto('/');
  await dismissCookies(page);
  await registerOverApi(page, server, { name: 'Sam', email: 'sam@example.com', password: PASSWORD });
  // The operator's command: a paid plan without a payment, before the first socket.
  await server.cli(['users', 'set-plan', 'sam@example.com', 'plus']);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await searx?.close();
  await pages?.close();
});

/**
 * Records, from now on, every text the page's search progress shows (each step of a deep
 * search's list too): a step may be up for less time than a test takes to look.
 */
async function recordProgress(p) {
  await p.evaluate(() => {
    window.progressTexts = [];
    window.progressLive = [];
    const look = () => {
      for (const status of document.querySelectorAll('[data-testid="search-progress"]')) {
        const live = `${status.getAttribute('role')}/${status.getAttribute('aria-live')}`;
        if (!window.progressLive.includes(live)) window.progressLive.push(live);
        for (const step of status.querySelectorAll('[data-testid="search-progress-step"]')) {
          const text = step.textContent;
          if (!window.progressTexts.includes(text)) window.progressTexts.push(text);
        }
      }
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

const progressSeen = (p) => p.evaluate(() => ({ texts: window.progressTexts, live: window.progressLive }));

/** The texts a step may show (web/src/locales/en-US/chat.json "search"). */
const STEP_TEXT =
  /^(Searching the web(: “.+”(, “.+”)*)?|Reading \d+ pages?|Reading pages|Weighing what was found \(round \d+ of \d+\)|Writing the answer)$/;

/** An answer's web sources: "[1] The lighthouse page — site", the title a link to the page. */
async function assertSources(reply) {
  const sources = reply.getByTestId('message-web-source');
  await sources.first().waitFor();
  const texts = await sources.allInnerTexts();
  assert.ok(texts.length >= 1, 'no web source');
  assert.match(texts[0], /^\[1\] The lighthouse page( — .+)?$/);
  const link = sources.first().getByRole('link', { name: 'The lighthouse page' });
  assert.equal(await link.getAttribute('href'), pageUrl);
  assert.equal(await link.getAttribute('target'), '_blank');
  assert.equal(await link.getAttribute('rel'), 'noopener noreferrer nofollow');
  // The answer's [1] links there too.
  assert.equal(await reply.locator('a[data-citation="1"]').first().getAttribute('href'), pageUrl);
}

test('a Plus user turns on web search and asks; the progress shows, the answer quotes the page and cites it, in a second tab too', async () => {
  await page.goto('/chat');
  const toggle = page.getByTestId('web-search-toggle');
  await toggle.and(page.locator('[data-gate="available"]')).waitFor();
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  await recordProgress(page);
  await page.getByTestId('composer-input').fill("What is the keeper's code?");
  await page.getByTestId('send-button').click();
  await page.waitForURL(/\/chat\/.+/);

  const reply = page.getByTestId('message-assistant').last();
  await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 90_000 });
  const text = await reply.innerText();
  assert.match(text, new RegExp(CODE));
  assert.match(text, /\[1\]/);
  await assertSources(reply);
  // The progress is gone with the answer's end.
  assert.equal(await reply.getByTestId('search-progress').count(), 0);

  // While the page was read (it answers after a pause), the line said so.
  const seen = await progressSeen(page);
  assert.ok(seen.texts.length > 0, 'no search progress was shown');
  for (const shown of seen.texts) assert.match(shown, STEP_TEXT);
  assert.ok(seen.texts.includes('Reading 1 page'), `progress seen: ${JSON.stringify(seen.texts)}`);
  assert.deepEqual(seen.live, ['status/polite']);
  assert.ok(searx.requests.some((url) => url.startsWith('/search?')), 'SearXNG was not asked');
  assert.ok(pages.requests.includes('/lighthouse.html'), 'the page was not read');

  // A second tab loads the conversation: the sources are there too.
  const second = await context.newPage();
  await second.goto(page.url());
  const mirrored = second.getByTestId('message-assistant').first();
  await mirrored.and(second.locator('[data-status="complete"]')).waitFor();
  assert.match(await mirrored.innerText(), new RegExp(CODE));
  await assertSources(mirrored);
  await second.close();
});

test('deep search: chosen with its hint, it searches and reads in rounds (every tab sees the steps) and ends in a cited report', async () => {
  // Still in the conversation of the web search; a second tab watches it live.
  const watcher = await context.newPage();
  await watcher.goto(page.url());
  await watcher.getByTestId('message-assistant').first().waitFor();
  await recordProgress(watcher);
  await recordProgress(page);

  const deep = page.getByTestId('deep-search-toggle');
  await deep.and(page.locator('[data-gate="available"]')).waitFor();
  assert.equal(await deep.innerText(), 'Deep search');
  await deep.click();
  assert.equal(await deep.getAttribute('aria-pressed'), 'true');
  assert.equal(await page.getByTestId('web-search-toggle').getAttribute('aria-pressed'), 'true');
  const hint = page.getByTestId('deep-search-hint');
  assert.match(
    await hint.innerText(),
    /^Several rounds of searching and reading, ending in a long report with sources\. Uses up to \d+ web searche?s?\.$/,
  );

  const answered = await page.getByTestId('message-assistant').count();
  await page.getByTestId('composer-input').fill("Write a report on the lighthouse keeper's code");
  await page.getByTestId('send-button').click();
  // For one send: off again once sent, web search stays on.
  await deep.and(page.locator('[aria-pressed="false"]')).waitFor();
  assert.equal(await page.getByTestId('web-search-toggle').getAttribute('aria-pressed'), 'true');

  const reply = page.getByTestId('message-assistant').nth(answered);
  await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 180_000 });
  assert.match(await reply.innerText(), new RegExp(CODE));
  assert.ok((await reply.locator('h1').count()) >= 1, 'the report has no heading');
  await assertSources(reply);

  // The other tab saw the deep search's steps listed, and shows the same report and sources.
  const mirrored = watcher.getByTestId('message-assistant').nth(answered);
  await mirrored.and(watcher.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  await assertSources(mirrored);
  for (const p of [page, watcher]) {
    const seen = await progressSeen(p);
    assert.ok(seen.texts.length > 0, 'no deep search progress was shown');
    for (const shown of seen.texts) assert.match(shown, STEP_TEXT);
    assert.ok(seen.texts.some((s) => s.startsWith('Reading ')), `progress seen: ${JSON.stringify(seen.texts)}`);
  }
  await watcher.close();
});

test('the toggles and a deep search’s hint fit 360 px (screenshot kept)', async () => {
  const { phone, page: p } = await phoneSignedInAs(browser, context, server);
  await p.goto(page.url());
  const deep = p.getByTestId('deep-search-toggle');
  await deep.and(p.locator('[data-gate="available"]')).waitFor();
  await deep.click();
  await p.getByTestId('deep-search-hint').waitFor();
  await p.getByTestId('composer-input').fill('Another report, please');
  const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  for (const id of ['web-search-toggle', 'deep-search-toggle', 'send-button']) {
    const box = await p.getByTestId(id).boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 360, `${id} is at ${JSON.stringify(box)}`);
  }
  await p.screenshot({ path: join(ARTIFACTS, 'search-360.png'), fullPage: true });
  await phone.close();
});

test('on a server without a search provider, a Plus user is told web search is not set up (toggles disabled)', async () => {
  const bare = await startServer();
  const other = await browser.newContext({ baseURL: bare.url, locale: 'en-US' });
  try {
    const p = await other.newPage();
    await p.goto('/');
    await dismissCookies(p);
    await registerOverApi(p, bare, { name: 'Una', email: 'una@example.com', password: PASSWORD });
    await bare.cli(['users', 'set-plan', 'una@example.com', 'plus']);
    await p.goto('/chat');
    const toggle = p.getByTestId('web-search-toggle');
    await toggle.and(p.locator('[data-gate="unconfigured"]')).waitFor();
    assert.equal(await toggle.isDisabled(), true);
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    const note = p.getByTestId('web-search-unconfigured');
    assert.equal(await note.innerText(), 'Web search is not set up on this server');
    assert.equal(await toggle.getAttribute('aria-describedby'), await note.getAttribute('id'));
    assert.equal(await p.getByTestId('deep-search-toggle').isDisabled(), true);
    // The plan cards do not sell it: web search is not among the Plus plan's working features.
    await p.goto('/settings#subscription');
    const plus = p.getByTestId('plan-card-plus');
    await plus.waitFor();
    const features = plus.getByRole('list', { name: 'Features' });
    if (await features.count()) assert.doesNotMatch(await features.innerText(), /Web search/);
  } finally {
    await other.close();
    await bare.stop();
  }
});
