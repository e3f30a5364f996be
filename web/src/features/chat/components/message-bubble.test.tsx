import { fireEvent, render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { i18n } from '@/lib/i18n';
import { storedFile } from '../test/fixtures';
import { UserBubble } from './message-bubble';

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
