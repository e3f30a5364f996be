import { fireEvent, render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { i18n } from '@/lib/i18n';
import { fromServer } from '../stores/thread';
import { answer, storedDocument, storedFile } from '../test/fixtures';
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
