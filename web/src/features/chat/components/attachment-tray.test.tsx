import { fireEvent, render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import type { ComposerAttachment } from '../stores/attachments';
import { storedDocument } from '@/test/chat-fixtures';
import { AttachmentTray } from './attachment-tray';

function documentItem(overrides: Partial<ComposerAttachment> = {}): ComposerAttachment {
  return {
    localId: 'l1',
    kind: 'document',
    name: 'report.pdf',
    size: 34_816,
    previewUrl: null,
    status: 'processing',
    file: storedDocument({ progress: 45 }),
    error: null,
    ...overrides,
  };
}

function renderTray(items: ComposerAttachment[]) {
  const onRemove = vi.fn();
  render(<AttachmentTray items={items} refusal={undefined} onRemove={onRemove} onDismissRefusal={vi.fn()} />);
  return onRemove;
}

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
});

describe('a document in the tray', () => {
  it('shows its name and, while the server reads it, a progress bar with the percentage', () => {
    renderTray([documentItem()]);
    const chip = screen.getByTestId('attachment-preview');
    expect(chip.getAttribute('data-kind')).toBe('document');
    expect(chip.getAttribute('aria-busy')).toBe('true');
    expect(within(chip).getByTitle('report.pdf').textContent).toBe('report.pdf');
    const bar = within(chip).getByRole('progressbar', { name: 'Reading report.pdf' });
    expect(bar.getAttribute('aria-valuenow')).toBe('45');
    expect(chip.textContent).toContain('45%');
    expect(within(chip).queryByRole('img')).toBeNull();
  });

  it('says it is uploading before the server answers', () => {
    renderTray([documentItem({ status: 'uploading', file: null })]);
    expect(within(screen.getByTestId('attachment-preview')).getByRole('status').textContent).toBe('Uploading report.pdf…');
    expect(screen.queryByRole('progressbar')).toBeNull();
  });

  it('once read, shows its pages and size (in both languages)', async () => {
    const ready = documentItem({ status: 'ready', file: storedDocument({ status: 'ready', progress: 100, pages: 12 }) });
    renderTray([ready, documentItem({ localId: 'l2', name: 'notes.md', status: 'ready', size: 2048, file: storedDocument({ _id: 'd2', status: 'ready', pages: null }) })]);
    const [pdf, notes] = screen.getAllByTestId('attachment-preview');
    expect(pdf!.textContent).toBe('report.pdf12 pages · 34 kB');
    expect(notes!.textContent).toBe('notes.md2 kB');
    expect(screen.queryByRole('progressbar')).toBeNull();
    await i18n.changeLanguage('hu-HU');
    await vi.waitFor(() => expect(screen.getAllByTestId('attachment-preview')[0]!.textContent).toBe('report.pdf12 oldal · 34 kB'));
  });

  it('that could not be read says so below the row, in both languages, and can be removed', async () => {
    const onRemove = renderTray([documentItem({ status: 'error', error: { kind: 'unreadable' }, file: storedDocument({ status: 'failed' }) })]);
    expect(screen.getByTestId('attachment-preview').getAttribute('data-status')).toBe('error');
    expect(screen.getByTestId('attachment-error').textContent).toBe('report.pdf could not be attached: The document could not be read');
    fireEvent.click(screen.getByRole('button', { name: 'Remove report.pdf' }));
    expect(onRemove).toHaveBeenCalledWith('l1');
    await i18n.changeLanguage('hu-HU');
    await vi.waitFor(() =>
      expect(screen.getByTestId('attachment-error').textContent).toBe('report.pdf nem csatolható: A dokumentum nem olvasható'),
    );
  });

  it('too large for the plan gives the limit', () => {
    renderTray([documentItem({ status: 'error', error: { kind: 'tooLarge', max: 20 }, file: null })]);
    expect(screen.getByTestId('attachment-error').textContent).toBe('report.pdf could not be attached: The document must be at most 20 MB');
  });

  it('names what can be attached when another file was refused, and the documents limit', () => {
    const { rerender } = render(
      <AttachmentTray items={[]} refusal={{ kind: 'unsupported', documents: true }} onRemove={vi.fn()} onDismissRefusal={vi.fn()} />,
    );
    expect(screen.getByTestId('attachment-refusal').textContent).toBe(
      'Only images (JPEG, PNG, WebP or HEIC) and documents (PDF, DOCX, TXT, Markdown or CSV) can be attached',
    );
    rerender(<AttachmentTray items={[]} refusal={{ kind: 'tooManyDocuments', max: 10 }} onRemove={vi.fn()} onDismissRefusal={vi.fn()} />);
    expect(screen.getByTestId('attachment-refusal').textContent).toBe('You can attach at most 10 documents to a message');
  });
});
