import { fireEvent, render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { chatSocket } from '@/lib/socket';
import type { SearchProgress, SearchStep } from '../lib/search-progress';
import { fromServer } from '../stores/thread';
import { answer, CONVERSATION_ID, storedDocument, storedFile } from '@/test/chat-fixtures';
import { AssistantBubble, UserBubble } from './message-bubble';

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
});

describe('a user message with images', () => {
  it('shows their thumbnails, sized before they load, lazily', () => {
    const files = [storedFile(), storedFile({ _id: 'f2', name: 'tall.jpg', width: 1000, height: 2000 })];
    render(<UserBubble content="What is this?" attachments={files} />);
    const bubble = screen.getByTestId('message-user');
    expect(within(bubble).getByRole('list', { name: 'Images sent with the message' })).toBeDefined();
    const [cat, tall] = within(bubble).getAllByRole<HTMLImageElement>('img');
    expect(cat!.getAttribute('src')).toBe('/api/files/f1/thumbnail');
    expect(cat!.alt).toBe('cat.png');
    // 640 × 480 fits the 256 px thumbnail as 256 × 192.
    expect([cat!.getAttribute('width'), cat!.getAttribute('height')]).toEqual(['256', '192']);
    expect([tall!.getAttribute('width'), tall!.getAttribute('height')]).toEqual(['128', '256']);
    expect(cat!.getAttribute('loading')).toBe('lazy');
    expect(bubble.textContent).toContain('What is this?');
  });

  it('links each to the full image, opened in a lightbox (a modified click is left to the browser)', () => {
    render(<UserBubble content="" attachments={[storedFile()]} />);
    const link = screen.getByRole<HTMLAnchorElement>('link', { name: 'Open cat.png' });
    expect(link.getAttribute('href')).toBe('/api/files/f1');
    expect(link.target).toBe('_blank');
    expect(link.rel).toBe('noopener noreferrer');

    fireEvent.click(link, { ctrlKey: true });
    expect(screen.queryByRole('dialog')).toBeNull();
    fireEvent.click(link);
    const dialog = screen.getByRole('dialog', { name: 'cat.png' });
    expect(within(dialog).getByTestId<HTMLImageElement>('lightbox-image').getAttribute('src')).toBe('/api/files/f1');
    expect(within(dialog).getByRole('link', { name: 'Open in a new tab' }).getAttribute('href')).toBe('/api/files/f1');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('shows only the images when there is no text (no empty bubble)', () => {
    const { container } = render(<UserBubble content="" attachments={[storedFile()]} />);
    expect(container.querySelector('p')).toBeNull();
    expect(screen.getAllByRole('img')).toHaveLength(1);
  });

  it('while pending, shows this tab’s own previews and says it is sending', () => {
    render(<UserBubble content="" sent={[{ file: storedFile(), previewUrl: 'blob:local' }]} pending />);
    const bubble = screen.getByTestId('message-user');
    expect(bubble.getAttribute('data-pending')).toBe('true');
    expect(within(bubble).getByRole('img', { name: 'cat.png' }).getAttribute('src')).toBe('blob:local');
    expect(bubble.textContent).toContain('Sending…');
  });

  it('renders a message without images as before', () => {
    render(<UserBubble content="Hello there" />);
    expect(screen.queryByRole('list')).toBeNull();
    expect(screen.getByTestId('message-user').textContent).toBe('You: Hello there');
  });
});

describe('a user message with documents', () => {
  const report = storedDocument({ status: 'ready', progress: 100, pages: 12 });
  const notes = storedDocument({ _id: 'd2', name: 'notes.md', mime: 'text/markdown', size: 1536, status: 'ready', pages: null });

  it('shows each as a chip (name, pages or size) that opens the original in a new tab, beside the images', () => {
    render(<UserBubble content="Summarise these" attachments={[storedFile(), report, notes]} />);
    const bubble = screen.getByTestId('message-user');
    expect(within(bubble).getAllByRole('img')).toHaveLength(1);
    const list = within(bubble).getByRole('list', { name: 'Documents sent with the message' });
    const chips = within(list).getAllByTestId<HTMLAnchorElement>('message-document');
    expect(chips.map((chip) => chip.textContent)).toEqual(['report.pdf12 pages · 34 kB', 'notes.md1.5 kB']);
    expect(chips[0]!.getAttribute('href')).toBe('/api/files/d1');
    expect(chips[0]!.target).toBe('_blank');
    expect(chips[0]!.rel).toBe('noopener noreferrer');
    expect(chips[0]!.title).toBe('Open report.pdf');
  });

  it('says pages in Hungarian too', async () => {
    await i18n.changeLanguage('hu-HU');
    render(<UserBubble content="" attachments={[report]} />);
    expect(screen.getByTestId('message-document').textContent).toBe('report.pdf12 oldal · 34 kB');
  });

  it('while pending, shows the documents of this tab’s send', () => {
    render(<UserBubble content="" sent={[{ file: report, previewUrl: null }]} pending />);
    expect(screen.getByTestId('message-document').getAttribute('data-file-id')).toBe('d1');
    expect(screen.queryByRole('img')).toBeNull();
  });
});

describe('an answer’s sources', () => {
  const sources = [
    { fileId: 'd1', name: 'report.pdf', page: 3 },
    { fileId: 'd2', name: 'notes.md', page: null },
  ];
  const completed = (extra: object) =>
    fromServer(answer({ content: 'The code is **LIGHTHOUSE-42**.', status: 'complete', ...extra }), true);

  it('are named under the answer, each a link to its file (a PDF at its page)', () => {
    render(<AssistantBubble message={completed({ sources })} stale={false} />);
    const line = screen.getByTestId('message-sources');
    expect(line.textContent).toBe('Sources: report.pdf, p. 3 · notes.md');
    const links = within(line).getAllByRole<HTMLAnchorElement>('link');
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['/api/files/d1#page=3', '/api/files/d2']);
    expect(links.every((a) => a.target === '_blank' && a.rel === 'noopener noreferrer')).toBe(true);
  });

  it('read in Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    render(<AssistantBubble message={completed({ sources })} stale={false} />);
    expect(screen.getByTestId('message-sources').textContent).toBe('Források: report.pdf, 3. o. · notes.md');
  });

  it('are not shown when there are none, or while the answer is written', () => {
    const { rerender } = render(<AssistantBubble message={completed({ sources: [] })} stale={false} />);
    expect(screen.queryByTestId('message-sources')).toBeNull();
    rerender(<AssistantBubble message={completed({})} stale={false} />);
    expect(screen.queryByTestId('message-sources')).toBeNull();
    rerender(<AssistantBubble message={fromServer(answer({ content: 'The code', sources }), true)} stale={false} />);
    expect(screen.queryByTestId('message-sources')).toBeNull();
  });
});

describe('an answer’s web sources', () => {
  const web = [
    { url: 'http://127.0.0.1:8080/lighthouse.html', title: 'The lighthouse page', site: '127.0.0.1' },
    { url: 'https://example.org/harbour', title: 'Harbour news', site: 'example.org' },
    { url: 'javascript:alert(1)', title: 'Not a link', site: 'evil.example' },
  ];
  const completed = (content: string, sources: object[]) =>
    fromServer(answer({ content, status: 'complete', sources: sources as never }), true);

  it('are a numbered list, "[n] Title — site", each title a link to its page opened apart', () => {
    render(<AssistantBubble message={completed('The code is LIGHTHOUSE-77 [1].', web)} stale={false} />);
    const list = screen.getByRole('region', { name: 'Web sources' });
    const items = within(list).getAllByTestId('message-web-source');
    expect(items.map((item) => item.textContent)).toEqual([
      '[1] The lighthouse page — 127.0.0.1',
      '[2] Harbour news — example.org',
      '[3] Not a link — evil.example',
    ]);
    const links = within(list).getAllByRole<HTMLAnchorElement>('link');
    expect(links.map((a) => [a.textContent, a.getAttribute('href')])).toEqual([
      ['The lighthouse page', 'http://127.0.0.1:8080/lighthouse.html'],
      ['Harbour news', 'https://example.org/harbour'],
    ]);
    expect(links.every((a) => a.target === '_blank' && a.rel === 'noopener noreferrer nofollow')).toBe(true);
    // Only http and https become links.
    expect(within(items[2]!).queryByRole('link')).toBeNull();
    expect(screen.queryByTestId('message-sources')).toBeNull();
  });

  it('are what the answer’s [n] link to', () => {
    render(<AssistantBubble message={completed('From the web [1] and [2], not [3] or [4].', web)} stale={false} />);
    const text = screen.getByTestId('message-assistant').querySelector('p')!;
    const cites = [...text.querySelectorAll<HTMLAnchorElement>('a[data-citation]')];
    expect(cites.map((a) => [a.textContent, a.getAttribute('href'), a.title])).toEqual([
      ['[1]', 'http://127.0.0.1:8080/lighthouse.html', 'The lighthouse page'],
      ['[2]', 'https://example.org/harbour', 'Harbour news'],
    ]);
    expect(cites[0]!.target).toBe('_blank');
    expect(text.textContent).toBe('From the web [1] and [2], not [3] or [4].');
  });

  it('read in Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    render(<AssistantBubble message={completed('A kód LIGHTHOUSE-77 [1].', web.slice(0, 1))} stale={false} />);
    const list = screen.getByRole('region', { name: 'Webes források' });
    expect(list.textContent).toBe('Webes források:[1] The lighthouse page — 127.0.0.1');
  });

  it('stand beside the documents an answer also drew on, numbered by their place among all sources', () => {
    const sources = [{ fileId: 'd1', name: 'notes.md', page: null }, web[1]!];
    render(<AssistantBubble message={completed('Both [1] and [2].', sources)} stale={false} />);
    expect(screen.getByTestId('message-sources').textContent).toBe('Sources: notes.md');
    expect(screen.getByTestId('message-web-source').textContent).toBe('[2] Harbour news — example.org');
    // [1] is the document: no web link.
    const cites = [...screen.getByTestId('message-assistant').querySelectorAll('a[data-citation]')];
    expect(cites.map((a) => a.textContent)).toEqual(['[2]']);
  });

  it('show the address when the page had no title, and no site twice', () => {
    render(<AssistantBubble message={completed('x', [{ url: 'https://example.org/a', title: '', site: 'example.org' }])} stale={false} />);
    expect(screen.getByTestId('message-web-source').textContent).toBe('[1] example.org');
  });
});

describe('a web search preparing an answer', () => {
  const step = (overrides: Partial<SearchStep>): SearchStep => ({
    stage: 'searching',
    queries: [],
    pages: null,
    round: 1,
    rounds: 1,
    ...overrides,
  });
  const progress = (steps: SearchStep[], deep = false): SearchProgress => ({ conversationId: 'c', deep, steps });
  const streaming = (content = '') => fromServer(answer({ content }), true);
  const status = () => screen.getByRole('status');

  it('shows its latest step under the answer, in a polite live region', () => {
    const { rerender } = render(
      <AssistantBubble
        message={streaming()}
        stale={false}
        progress={progress([step({ queries: ['keeper code', 'lighthouse keeper'] })])}
      />,
    );
    expect(status().getAttribute('aria-live')).toBe('polite');
    expect(status().textContent).toBe('Searching the web: “keeper code”, “lighthouse keeper”');
    // No typing dots meanwhile, and the answer is not busy: its steps are announced.
    expect(screen.getByTestId('message-assistant').getAttribute('aria-busy')).toBeNull();

    const texts: [SearchStep, string][] = [
      [step({ stage: 'reading', pages: 1 }), 'Reading 1 page'],
      [step({ stage: 'reading', pages: 3 }), 'Reading 3 pages'],
      [step({ stage: 'reflecting', round: 2, rounds: 3 }), 'Weighing what was found (round 2 of 3)'],
      [step({ stage: 'writing' }), 'Writing the answer'],
      [step({}), 'Searching the web'],
    ];
    for (const [s, text] of texts) {
      rerender(<AssistantBubble message={streaming()} stale={false} progress={progress([step({ queries: ['x'] }), s])} />);
      expect(status().textContent).toBe(text);
    }
  });

  it('reads in Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    const { rerender } = render(
      <AssistantBubble message={streaming()} stale={false} progress={progress([step({ queries: ['kód', 'világítótorony'] })])} />,
    );
    expect(status().textContent).toBe('Keresés a weben: „kód”, „világítótorony”');
    const texts: [SearchStep, string][] = [
      [step({ stage: 'reading', pages: 1 }), '1 oldal olvasása'],
      [step({ stage: 'reading', pages: 3 }), '3 oldal olvasása'],
      [step({ stage: 'reflecting', round: 2, rounds: 3 }), 'A talált információk mérlegelése (2/3. kör)'],
      [step({ stage: 'writing' }), 'A válasz megírása'],
    ];
    for (const [s, text] of texts) {
      rerender(<AssistantBubble message={streaming()} stale={false} progress={progress([s])} />);
      expect(status().textContent).toBe(text);
    }
  });

  it('lists every step of a deep search so far', () => {
    render(
      <AssistantBubble
        message={streaming()}
        stale={false}
        progress={progress(
          [
            step({ queries: ['a'], rounds: 2 }),
            step({ stage: 'reading', pages: 2, rounds: 2 }),
            step({ stage: 'reflecting', rounds: 2 }),
            step({ queries: ['b'], round: 2, rounds: 2 }),
          ],
          true,
        )}
      />,
    );
    const list = within(status()).getByRole('list', { name: 'Deep search steps' });
    expect(within(list).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      'Searching the web: “a”',
      'Reading 2 pages',
      'Weighing what was found (round 1 of 2)',
      'Searching the web: “b”',
    ]);
  });

  it('stays under the text as it streams, and is gone once the answer has ended', () => {
    const steps = progress([step({ stage: 'writing' })]);
    const { rerender } = render(<AssistantBubble message={streaming('The code')} stale={false} progress={steps} />);
    expect(screen.getByTestId('search-progress').textContent).toBe('Writing the answer');
    expect(screen.getByTestId('message-assistant').getAttribute('aria-busy')).toBe('true');
    rerender(<AssistantBubble message={fromServer(answer({ content: 'The code', status: 'complete' }), true)} stale={false} progress={steps} />);
    expect(screen.queryByTestId('search-progress')).toBeNull();
  });
});

describe('an image answer (image generation)', () => {
  const image = storedFile({
    _id: 'img1',
    name: 'a-red-fox-in-the-snow.jpg',
    mime: 'image/jpeg',
    width: 256,
    height: 256,
  });
  const made = () =>
    fromServer(
      answer({
        status: 'complete',
        model: 'gpt-image-1',
        content: 'Here is the image: *A red fox in the snow*',
        attachments: [image],
      }),
      true,
    );

  it('says "Creating the image…" in a polite live region while it has no text, instead of the typing dots', () => {
    const { container, rerender } = render(
      <AssistantBubble message={fromServer(answer({ model: 'gpt-image-1' }), true)} stale={false} imageAnswer />,
    );
    const status = screen.getByRole('status');
    expect(status.textContent).toBe('Creating the image…');
    expect(status.getAttribute('aria-live')).toBe('polite');
    expect(container.querySelector('[class*="typing"]')).toBeNull();
    expect(screen.getByTestId('message-assistant').getAttribute('aria-busy')).toBeNull();
    // Not an image answer: the dots as before.
    rerender(<AssistantBubble message={fromServer(answer(), true)} stale={false} />);
    expect(screen.queryByRole('status')).toBeNull();
    expect(container.querySelector('[class*="typing"]')).not.toBeNull();
  });

  it('says it in Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    render(<AssistantBubble message={fromServer(answer(), true)} stale={false} imageAnswer />);
    expect(screen.getByRole('status').textContent).toBe('A kép készül…');
  });

  it('shows the image under the text, sized before it loads, with a Download link to the file', () => {
    render(<AssistantBubble message={made()} stale={false} imageAnswer />);
    expect(screen.queryByRole('status')).toBeNull();
    const bubble = screen.getByTestId('message-assistant');
    expect(within(bubble).getByRole('list', { name: 'Images in the answer' })).toBeDefined();
    const img = within(bubble).getByRole<HTMLImageElement>('img', { name: 'a-red-fox-in-the-snow.jpg' });
    expect(img.getAttribute('src')).toBe('/api/files/img1/thumbnail');
    expect(img.getAttribute('width')).toBe('256');
    expect(img.getAttribute('height')).toBe('256');
    const download = within(bubble).getByTestId('message-image-download');
    expect(download.textContent).toBe('Download');
    expect(download.getAttribute('href')).toBe('/api/files/img1');
    expect(download.getAttribute('download')).toBe('a-red-fox-in-the-snow.jpg');
    expect(download.getAttribute('aria-label')).toBe('Download: a-red-fox-in-the-snow.jpg');
    fireEvent.click(within(bubble).getByRole('link', { name: 'Open a-red-fox-in-the-snow.jpg' }));
    expect(screen.getByTestId<HTMLImageElement>('lightbox-image').getAttribute('src')).toBe('/api/files/img1');
  });

  it('reads "Letöltés" in Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    render(<AssistantBubble message={made()} stale={false} />);
    expect(screen.getByTestId('message-image-download').textContent).toBe('Letöltés');
    expect(screen.getByRole('list', { name: 'A válasz képei' })).toBeDefined();
  });

  it('shows an answer’s image from a reload too (no image answer known to this tab)', () => {
    render(<AssistantBubble message={fromServer(made(), false)} stale={false} />);
    expect(screen.getByRole('img', { name: 'a-red-fox-in-the-snow.jpg' })).toBeDefined();
    expect(screen.getByTestId('message-image-download')).toBeDefined();
  });
});

describe('a failed answer', () => {
  const failed = () => fromServer(answer({ content: 'Half an ans', status: 'error' }), false);

  it.each([
    ['en-US', 'The answer could not be completed.', 'Try again'],
    ['hu-HU', 'A választ nem sikerült befejezni.', 'Próbálja újra'],
  ])('%s: offers "Try again", which regenerates it (a new version, the same model)', async (language, note, label) => {
    await i18n.changeLanguage(language);
    const emit = vi.spyOn(chatSocket, 'emit').mockReturnValue(true);
    render(<AssistantBubble message={failed()} stale={false} conversationId={CONVERSATION_ID} depth={1} />);
    const bubble = screen.getByTestId('message-assistant');
    expect(bubble.textContent).toContain(note);
    fireEvent.click(within(bubble).getByRole('button', { name: label }));
    expect(emit).toHaveBeenCalledWith(
      'chat.regenerate',
      expect.objectContaining({ conversationId: CONVERSATION_ID, messageId: failed()._id, model: null }),
    );
    emit.mockRestore();
  });

  it('waits while the conversation is busy, and offers nothing on a shared page', () => {
    const { unmount } = render(
      <AssistantBubble message={failed()} stale={false} conversationId={CONVERSATION_ID} depth={1} busy />,
    );
    expect(screen.getByTestId<HTMLButtonElement>('answer-retry').disabled).toBe(true);
    unmount();
    render(<AssistantBubble message={failed()} stale={false} />);
    expect(screen.queryByTestId('answer-retry')).toBeNull();
  });

  it('an answer whose server was lost (interrupted) is tried again the same way', () => {
    render(
      <AssistantBubble
        message={fromServer(answer({ content: 'Half', status: 'streaming' }), false)}
        stale
        conversationId={CONVERSATION_ID}
        depth={1}
      />,
    );
    expect(screen.getByTestId('message-assistant').textContent).toContain('This answer was interrupted.');
    expect(screen.getByTestId('answer-retry')).toBeDefined();
  });
});
