import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useToastStore } from '@/components/toast';
import { i18n } from '@/lib/i18n';
import type { Plan } from '@/types/generated';
import { useAttachmentStore, type ComposerAttachment } from '../stores/attachments';
import {
  basePlan,
  freePlan,
  storedDocument,
  storedFile,
  withDocuments,
  withoutImageGeneration,
  withoutImages,
  withoutSearch,
} from '@/test/chat-fixtures';
import { Composer, type ComposerProps } from './composer';

const KEY = 'k';
const original = useAttachmentStore.getState();
const add = vi.fn<typeof original.add>();
const remove = vi.fn<typeof original.remove>();

function item(overrides: Partial<ComposerAttachment> = {}): ComposerAttachment {
  return {
    localId: 'l1',
    kind: 'image',
    name: 'cat.png',
    size: 2048,
    previewUrl: 'blob:cat',
    status: 'ready',
    file: storedFile(),
    error: null,
    ...overrides,
  };
}

function setItems(items: ComposerAttachment[]) {
  act(() => useAttachmentStore.setState((state) => ({ items: { ...state.items, [KEY]: items } })));
}

function renderComposer(overrides: Partial<ComposerProps> = {}) {
  const props: ComposerProps = {
    attachmentKey: KEY,
    text: '',
    onTextChange: vi.fn(),
    onSend: vi.fn(),
    onStop: vi.fn(),
    streaming: false,
    stopping: false,
    sending: false,
    plan: freePlan,
    model: 'gpt-4o-mini',
    onModelChange: vi.fn(),
    webSearch: false,
    onWebSearchChange: vi.fn(),
    deepSearch: false,
    onDeepSearchChange: vi.fn(),
    imageGeneration: false,
    onImageGenerationChange: vi.fn(),
    onNotice: vi.fn(),
    ...overrides,
  };
  render(<Composer {...props} />);
  return props;
}

const sendButton = () => screen.getByTestId<HTMLButtonElement>('send-button');
const sendable = () => !sendButton().disabled;
const openMenu = () => {
  fireEvent.click(screen.getByTestId('attach-button'));
  return screen.getByRole('menu', { name: 'Attach' });
};

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
  useAttachmentStore.setState({ ...original, items: {}, refusals: {}, add, remove });
  add.mockReset();
  remove.mockReset();
  useToastStore.getState().clear();
});

afterEach(() => {
  useAttachmentStore.setState(original);
});

describe('the composer with images', () => {
  it('sends images without text, but not while one is still uploading', () => {
    const props = renderComposer();
    expect(sendButton().disabled).toBe(true);
    setItems([item()]);
    expect(sendButton().disabled).toBe(false);
    fireEvent.click(sendButton());
    expect(props.onSend).toHaveBeenCalledOnce();

    setItems([item(), item({ localId: 'l2', status: 'uploading', file: null })]);
    expect(sendButton().disabled).toBe(true);
    expect(sendButton().title).toBe('Wait until the images are uploaded');
    setItems([item({ status: 'preparing', file: null })]);
    expect(sendButton().disabled).toBe(true);
    // A failed image alone is nothing to send.
    setItems([item({ status: 'error', file: null, error: { kind: 'heic' } })]);
    expect(sendButton().disabled).toBe(true);
  });

  it('waits for uploads also when there is text', () => {
    renderComposer({ text: 'Look at this' });
    expect(sendButton().disabled).toBe(false);
    setItems([item({ status: 'uploading', file: null })]);
    expect(sendButton().disabled).toBe(true);
  });

  it('shows each preview with its state, the reason of a failure, and a remove button', () => {
    renderComposer();
    setItems([
      item(),
      item({ localId: 'l2', name: 'dog.jpg', status: 'uploading', file: null }),
      item({ localId: 'l3', name: 'IMG_1.HEIC', previewUrl: null, status: 'error', file: null, error: { kind: 'heic' } }),
      item({ localId: 'l4', name: 'big.png', status: 'error', file: null, error: { kind: 'upload', message: 'Your file storage is full' } }),
    ]);
    const previews = screen.getAllByTestId('attachment-preview');
    expect(previews.map((p) => p.getAttribute('data-status'))).toEqual(['ready', 'uploading', 'error', 'error']);
    expect(within(previews[0]!).getByRole<HTMLImageElement>('img', { name: 'cat.png' }).src).toBe('blob:cat');
    expect(within(previews[1]!).getByRole('status').textContent).toBe('Uploading dog.jpg…');
    expect(screen.getAllByTestId('attachment-error').map((e) => e.textContent)).toEqual([
      'IMG_1.HEIC could not be attached: HEIC image conversion error',
      'big.png could not be attached: Your file storage is full',
    ]);
    fireEvent.click(screen.getByRole('button', { name: 'Remove dog.jpg' }));
    expect(remove).toHaveBeenCalledWith(KEY, 'l2');
  });

  it('says how many images a message may carry when more were picked', () => {
    renderComposer();
    act(() => useAttachmentStore.setState({ refusals: { [KEY]: { kind: 'tooMany', max: 1 } } }));
    expect(screen.getByTestId('attachment-refusal').textContent).toBe('You can attach at most 1 images to a message');
    void i18n.changeLanguage('hu-HU');
    return vi.waitFor(() =>
      expect(screen.getByTestId('attachment-refusal').textContent).toBe('Egy üzenethez legfeljebb 1 képet csatolhat'),
    );
  });
});

describe('the attach menu', () => {
  it('offers photos, camera and document on every plan once images are taken', () => {
    renderComposer();
    const button = screen.getByTestId('attach-button');
    expect(button.getAttribute('data-gate')).toBe('menu');
    expect(button.getAttribute('aria-expanded')).toBe('false');
    const menu = openMenu();
    expect(button.getAttribute('aria-expanded')).toBe('true');
    expect(within(menu).getAllByRole('menuitem').map((i) => i.textContent)).toEqual(['Photos', 'Camera', 'Document']);
    expect(document.activeElement).toBe(screen.getByTestId('attach-photos'));
  });

  it('moves with the arrow keys and closes with Escape, back on the button', () => {
    renderComposer();
    const menu = openMenu();
    fireEvent.keyDown(menu, { key: 'ArrowDown' });
    expect(document.activeElement).toBe(screen.getByTestId('attach-camera'));
    fireEvent.keyDown(menu, { key: 'ArrowUp' });
    fireEvent.keyDown(menu, { key: 'ArrowUp' });
    expect(document.activeElement).toBe(screen.getByTestId('attach-document'));
    fireEvent.keyDown(menu, { key: 'Escape' });
    expect(screen.queryByRole('menu')).toBeNull();
    expect(document.activeElement).toBe(screen.getByTestId('attach-button'));
  });

  it('closes on a press outside', () => {
    renderComposer();
    openMenu();
    fireEvent.pointerDown(document.body);
    expect(screen.queryByRole('menu')).toBeNull();
  });

  it('opens the photo picker (several images, HEIC too) and attaches what is chosen, within the plan', () => {
    const click = vi.spyOn(HTMLInputElement.prototype, 'click').mockImplementation(() => undefined);
    renderComposer({ plan: basePlan });
    fireEvent.click(within(openMenu()).getByText('Photos'));
    const input = screen.getByTestId<HTMLInputElement>('attach-photos-input');
    expect(click.mock.contexts).toEqual([input]);
    expect(input.multiple).toBe(true);
    expect(input.accept).toBe('image/*,.heic,.heif');
    const picked = [new File(['a'], 'a.png', { type: 'image/png' }), new File(['b'], 'b.heic')];
    fireEvent.change(input, { target: { files: picked } });
    expect(add).toHaveBeenCalledWith(KEY, picked, { max: 2, maxBytes: 10 * 1024 * 1024, maxDocuments: 0, documentMaxMb: 20 });
  });

  it('answers "Document" with the premium notice on a plan without documents', () => {
    const free = renderComposer();
    const menu = openMenu();
    expect(within(menu).getByTestId('attach-document').getAttribute('data-gate')).toBe('premium');
    fireEvent.click(within(menu).getByText('Document'));
    expect(free.onNotice).toHaveBeenCalledWith('documentUploadPremium');
    expect(screen.queryByRole('menu')).toBeNull();
  });

  it('answers "Document" on a plan with document processing with "coming soon"', () => {
    const base = renderComposer({ plan: basePlan });
    const menu = openMenu();
    expect(within(menu).getByTestId('attach-document').getAttribute('data-gate')).toBe('comingSoon');
    fireEvent.click(within(menu).getByText('Document'));
    expect(base.onNotice).toHaveBeenCalledWith('documentsComingSoon');
  });

  it.each<[string, Plan, string]>([
    ['free', withoutImages(freePlan), 'documentUploadPremium'],
    ['base', withoutImages(basePlan), 'attachmentsComingSoon'],
  ])('is the notice button it was while the server takes no images (%s)', (_name, plan, notice) => {
    const props = renderComposer({ plan });
    fireEvent.click(screen.getByTestId('attach-button'));
    expect(screen.queryByRole('menu')).toBeNull();
    expect(props.onNotice).toHaveBeenCalledWith(notice);
  });

  it('waits while the plan is unknown', () => {
    renderComposer({ plan: null });
    expect(screen.getByTestId<HTMLButtonElement>('attach-button').disabled).toBe(true);
  });
});

describe('the composer with documents', () => {
  const plus = withDocuments(basePlan);
  const LIMITS = { max: 2, maxBytes: 10 * 1024 * 1024, maxDocuments: 10, documentMaxMb: 20 };
  const doc = (overrides: Partial<ComposerAttachment> = {}) =>
    item({ localId: 'd', kind: 'document', name: 'report.pdf', previewUrl: null, file: storedDocument(), status: 'processing', ...overrides });

  it('opens the document picker (PDF, DOCX, TXT, Markdown, CSV) when the plan and the server take documents', () => {
    const click = vi.spyOn(HTMLInputElement.prototype, 'click').mockImplementation(() => undefined);
    const props = renderComposer({ plan: plus });
    const menu = openMenu();
    expect(within(menu).getByTestId('attach-document').getAttribute('data-gate')).toBe('available');
    fireEvent.click(within(menu).getByText('Document'));
    const input = screen.getByTestId<HTMLInputElement>('attach-document-input');
    expect(click.mock.contexts).toEqual([input]);
    expect(props.onNotice).not.toHaveBeenCalled();
    expect(input.multiple).toBe(true);
    expect(input.accept.split(',').slice(0, 5)).toEqual(['.pdf', '.docx', '.txt', '.md', '.csv']);
    expect(input.accept).toContain('application/pdf');
    const picked = [new File(['%PDF'], 'report.pdf', { type: 'application/pdf' }), new File(['# Notes'], 'notes.md')];
    fireEvent.change(input, { target: { files: picked } });
    expect(add).toHaveBeenCalledWith(KEY, picked, LIMITS);
  });

  it('keeps "Document upload is a premium feature" for a plan without document processing', () => {
    const props = renderComposer({ plan: withDocuments(freePlan) });
    const menu = openMenu();
    expect(within(menu).getByTestId('attach-document').getAttribute('data-gate')).toBe('premium');
    fireEvent.click(within(menu).getByText('Document'));
    expect(props.onNotice).toHaveBeenCalledWith('documentUploadPremium');
  });

  it('offers documents alone when the server takes documents but no images', () => {
    renderComposer({ plan: withoutImages(plus) });
    expect(within(openMenu()).getAllByRole('menuitem').map((i) => i.textContent)).toEqual(['Document']);
  });

  it('does not send while a document is being read, and says why', () => {
    const props = renderComposer({ plan: plus, text: 'What does it say?' });
    setItems([item(), doc()]);
    expect(sendable()).toBe(false);
    expect(sendButton().title).toBe('Wait until the documents are read');
    fireEvent.click(sendButton());
    expect(props.onSend).not.toHaveBeenCalled();
    setItems([item(), doc({ status: 'uploading', file: null })]);
    expect(sendable()).toBe(false);
    setItems([item(), doc({ status: 'ready', file: storedDocument({ status: 'ready', progress: 100 }) })]);
    expect(sendable()).toBe(true);
    expect(sendButton().title).toBe('');
  });

  it('sends a ready document without text, not a failed one alone', () => {
    renderComposer({ plan: plus });
    setItems([doc({ status: 'ready', file: storedDocument({ status: 'ready', progress: 100 }) })]);
    expect(sendable()).toBe(true);
    setItems([doc({ status: 'error', error: { kind: 'unreadable' }, file: storedDocument({ status: 'failed' }) })]);
    expect(sendable()).toBe(false);
  });

  it('takes a pasted document like a picked one', () => {
    const pdf = new File(['%PDF'], 'report.pdf', { type: 'application/pdf' });
    renderComposer({ plan: plus });
    fireEvent.paste(screen.getByTestId('composer-input'), { clipboardData: { files: [pdf], types: ['Files'] } });
    expect(add).toHaveBeenCalledWith(KEY, [pdf], LIMITS);
  });

  it('answers a pasted document on the free plan with "Document upload is a premium feature"', () => {
    const pdf = new File(['%PDF'], 'report.pdf', { type: 'application/pdf' });
    const props = renderComposer({ plan: withDocuments(freePlan) });
    fireEvent.paste(screen.getByTestId('composer-input'), { clipboardData: { files: [pdf], types: ['Files'] } });
    expect(add).not.toHaveBeenCalled();
    expect(props.onNotice).toHaveBeenCalledWith('documentUploadPremium');
  });
});

describe('the camera', () => {
  afterEach(() => {
    Object.defineProperty(navigator, 'mediaDevices', { value: undefined, configurable: true });
  });

  it('without a camera API says "Error accessing camera" and opens the browser’s picker', async () => {
    Object.defineProperty(navigator, 'mediaDevices', { value: undefined, configurable: true });
    const click = vi.spyOn(HTMLInputElement.prototype, 'click').mockImplementation(() => undefined);
    renderComposer();
    fireEvent.click(within(openMenu()).getByText('Camera'));
    const input = screen.getByTestId<HTMLInputElement>('attach-camera-input');
    await vi.waitFor(() => expect(click.mock.contexts).toEqual([input]));
    expect(input.getAttribute('capture')).toBe('environment');
    expect(useToastStore.getState().toasts.map((t) => t.message)).toEqual([
      'Error accessing camera. Switching to browser upload.',
    ]);
    expect(screen.queryByTestId('camera-dialog')).toBeNull();
  });

  it('falls back the same way when the permission is refused', async () => {
    const getUserMedia = vi.fn(() => Promise.reject(new DOMException('denied', 'NotAllowedError')));
    Object.defineProperty(navigator, 'mediaDevices', { value: { getUserMedia }, configurable: true });
    const click = vi.spyOn(HTMLInputElement.prototype, 'click').mockImplementation(() => undefined);
    renderComposer();
    fireEvent.click(within(openMenu()).getByText('Camera'));
    await vi.waitFor(() => expect(click).toHaveBeenCalledOnce());
    expect(getUserMedia).toHaveBeenCalledWith({ video: { facingMode: { ideal: 'environment' } }, audio: false });
    expect(useToastStore.getState().toasts[0]?.message).toBe('Error accessing camera. Switching to browser upload.');
  });

  it('shows the camera while its dialog is open, and turns it off on cancel', async () => {
    const track = { stop: vi.fn() };
    const stream = { getTracks: () => [track] } as unknown as MediaStream;
    Object.defineProperty(navigator, 'mediaDevices', {
      value: { getUserMedia: vi.fn(() => Promise.resolve(stream)) },
      configurable: true,
    });
    renderComposer();
    fireEvent.click(within(openMenu()).getByText('Camera'));
    const dialog = await screen.findByRole('dialog', { name: 'Take a photo' });
    await vi.waitFor(() => expect(screen.getByTestId<HTMLVideoElement>('camera-video').srcObject).toBe(stream));
    // Capture waits for the first frame.
    expect(within(dialog).getByTestId<HTMLButtonElement>('camera-capture').disabled).toBe(true);
    fireEvent.click(within(dialog).getByTestId('camera-cancel'));
    expect(track.stop).toHaveBeenCalled();
    expect(add).not.toHaveBeenCalled();
  });
});

describe('pasting', () => {
  const paste = (files: File[], types: string[] = ['Files']) =>
    fireEvent.paste(screen.getByTestId('composer-input'), { clipboardData: { files, types } });

  it('attaches pasted images', () => {
    renderComposer();
    const image = new File(['x'], 'image.png', { type: 'image/png' });
    paste([image]);
    expect(add).toHaveBeenCalledWith(KEY, [image], { max: 1, maxBytes: 10 * 1024 * 1024, maxDocuments: 0, documentMaxMb: 20 });
  });

  it('leaves text and other files to the text box', () => {
    const props = renderComposer();
    paste([], ['text/plain']);
    paste([new File(['x'], 'a.zip', { type: 'application/zip' })]);
    expect(add).not.toHaveBeenCalled();
    expect(props.onNotice).not.toHaveBeenCalled();
  });

  it('ignores images while the server takes none', () => {
    renderComposer({ plan: withoutImages(freePlan) });
    paste([new File(['x'], 'image.png', { type: 'image/png' })]);
    expect(add).not.toHaveBeenCalled();
  });
});

describe('web search and deep search', () => {
  const webToggle = () => screen.getByTestId<HTMLButtonElement>('web-search-toggle');
  const deepToggle = () => screen.getByTestId<HTMLButtonElement>('deep-search-toggle');

  it('offers deep search beside web search when the server searches, as a pressed-or-not button that says what it costs', () => {
    const props = renderComposer({ plan: basePlan });
    expect(webToggle().getAttribute('data-gate')).toBe('available');
    const deep = screen.getByRole('button', { name: 'Deep search' });
    expect(deep).toBe(deepToggle());
    expect(deep.getAttribute('aria-pressed')).toBe('false');
    const hint =
      'Several rounds of searching and reading, ending in a long report with sources. Uses up to 6 web searches.';
    expect(deep.title).toBe(hint);
    const described = document.getElementById(deep.getAttribute('aria-describedby')!);
    expect(described?.textContent).toBe(hint);
    // Said aloud with the button; shown only once chosen.
    expect(described?.className).toBe('visually-hidden');
    fireEvent.click(deep);
    expect(props.onDeepSearchChange).toHaveBeenCalledWith(true);
    expect(props.onNotice).not.toHaveBeenCalled();
  });

  it('shows the hint while deep search is on, and turns it off again', () => {
    const props = renderComposer({ plan: basePlan, webSearch: true, deepSearch: true });
    expect(deepToggle().getAttribute('aria-pressed')).toBe('true');
    expect(webToggle().getAttribute('aria-pressed')).toBe('true');
    const hint = screen.getByTestId('deep-search-hint');
    expect(hint.className).not.toBe('visually-hidden');
    fireEvent.click(deepToggle());
    expect(props.onDeepSearchChange).toHaveBeenCalledWith(false);
  });

  it('says the count of searches in Hungarian, at one search too', async () => {
    await i18n.changeLanguage('hu-HU');
    renderComposer({ plan: { ...basePlan, deepSearchSearches: 1 }, deepSearch: true });
    expect(screen.getByRole('button', { name: 'Mélykeresés' })).toBe(deepToggle());
    expect(screen.getByTestId('deep-search-hint').textContent).toBe(
      'Több kör keresés és olvasás, a végén hosszú, forrásokkal ellátott jelentés. Legfeljebb 1 webes keresést használ.',
    );
    await i18n.changeLanguage('en-US');
    expect(screen.getByTestId('deep-search-hint').textContent).toMatch(/Uses up to 1 web search\.$/);
  });

  it('answers both with the premium notice on a plan without web search', () => {
    const props = renderComposer({ plan: freePlan });
    expect(deepToggle().getAttribute('data-gate')).toBe('premium');
    expect(deepToggle().disabled).toBe(false);
    fireEvent.click(deepToggle());
    fireEvent.click(webToggle());
    expect(props.onNotice).toHaveBeenCalledTimes(2);
    expect(props.onNotice).toHaveBeenNthCalledWith(1, 'webSearchPremium');
    expect(props.onNotice).toHaveBeenNthCalledWith(2, 'webSearchPremium');
    expect(props.onDeepSearchChange).not.toHaveBeenCalled();
    expect(screen.queryByTestId('web-search-unconfigured')).toBeNull();
  });

  it('never pretends to work on a server without a search provider: both disabled, and it says why', async () => {
    const props = renderComposer({ plan: withoutSearch(basePlan), webSearch: true, deepSearch: true });
    for (const toggle of [webToggle(), deepToggle()]) {
      expect(toggle.getAttribute('data-gate')).toBe('unconfigured');
      expect(toggle.disabled).toBe(true);
      expect(toggle.getAttribute('aria-pressed')).toBe('false');
      expect(document.getElementById(toggle.getAttribute('aria-describedby')!)?.textContent).toBe(
        'Web search is not set up on this server',
      );
    }
    expect(screen.getByTestId('web-search-unconfigured').textContent).toBe('Web search is not set up on this server');
    expect(screen.queryByTestId('deep-search-hint')).toBeNull();
    fireEvent.click(webToggle());
    expect(props.onWebSearchChange).not.toHaveBeenCalled();
    expect(props.onNotice).not.toHaveBeenCalled();
    await i18n.changeLanguage('hu-HU');
    expect(screen.getByTestId('web-search-unconfigured').textContent).toBe('A webes keresés nincs beállítva ezen a szerveren');
  });

  it('waits with both while the plan is unknown', () => {
    renderComposer({ plan: null });
    expect(webToggle().disabled).toBe(true);
    expect(deepToggle().disabled).toBe(true);
  });

  it('leaves deep search out on a server that names no searches for it', () => {
    renderComposer({ plan: { ...basePlan, deepSearchSearches: 0 } });
    expect(webToggle().getAttribute('data-gate')).toBe('available');
    expect(screen.queryByTestId('deep-search-toggle')).toBeNull();
  });
});

describe('create image', () => {
  const imageToggle = () => screen.getByTestId<HTMLButtonElement>('image-generation-toggle');
  const input = () => screen.getByTestId<HTMLTextAreaElement>('composer-input');

  it('is a pressed-or-not button beside the search toggles when the plan and the server make images', () => {
    const props = renderComposer({ plan: basePlan });
    const toggle = screen.getByRole('button', { name: 'Create image' });
    expect(toggle).toBe(imageToggle());
    expect(toggle.getAttribute('data-gate')).toBe('available');
    expect(toggle.getAttribute('aria-pressed')).toBe('false');
    expect(input().placeholder).toBe('Write a message…');
    fireEvent.click(toggle);
    expect(props.onImageGenerationChange).toHaveBeenCalledWith(true);
    expect(props.onNotice).not.toHaveBeenCalled();
  });

  it('asks for a description while on, and turns off again', () => {
    const props = renderComposer({ plan: basePlan, imageGeneration: true });
    expect(imageToggle().getAttribute('aria-pressed')).toBe('true');
    expect(input().placeholder).toBe('Describe the image you want');
    fireEvent.click(imageToggle());
    expect(props.onImageGenerationChange).toHaveBeenCalledWith(false);
  });

  it('reads in Hungarian', async () => {
    await i18n.changeLanguage('hu-HU');
    renderComposer({ plan: basePlan, imageGeneration: true });
    expect(screen.getByRole('button', { name: 'Kép készítése' })).toBe(imageToggle());
    expect(input().placeholder).toBe('Írja le, milyen képet szeretne');
  });

  it('answers with the premium notice on a plan without image generation', () => {
    const props = renderComposer({ plan: freePlan, imageGeneration: true });
    expect(imageToggle().getAttribute('data-gate')).toBe('premium');
    expect(imageToggle().getAttribute('aria-pressed')).toBe('false');
    expect(imageToggle().disabled).toBe(false);
    expect(input().placeholder).toBe('Write a message…');
    fireEvent.click(imageToggle());
    expect(props.onNotice).toHaveBeenCalledWith('imageGenerationPremium');
    expect(props.onImageGenerationChange).not.toHaveBeenCalled();
  });

  it('is not offered by a server that makes no images, and waits while the plan is unknown', () => {
    renderComposer({ plan: withoutImageGeneration(basePlan) });
    expect(screen.queryByTestId('image-generation-toggle')).toBeNull();
    cleanup();
    renderComposer({ plan: null });
    expect(imageToggle().disabled).toBe(true);
  });
});
