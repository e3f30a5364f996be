import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { SidebarSlotProvider } from '@/components/layout/sidebar-slot';
import { useSidebarHost } from '@/components/layout/sidebar-slot-context';
import { useAuthStore } from '@/features/auth';
import { startSocketRouter } from '@/app/socket-router';
import { useSubscriptionStore } from '@/features/subscription';
import { i18n } from '@/lib/i18n';
import { chatSocket } from '@/lib/socket';
import { anna, jsonResponse } from '@/test/fixtures';
import type { Plan } from '@/types/generated';
import type { ImageIo } from '../lib/image-prep';
import { setImageIo, useAttachmentStore } from '../stores/attachments';
import { useChatStore } from '../stores/chat';
import {
  answer,
  basePlan,
  conversation,
  CONVERSATION_ID,
  freePlan,
  storedDocument,
  storedFile,
  subscriptionAnswer,
  subscriptionOn,
  usageAnswer,
  userMessage,
  withDocuments,
  withoutImages,
  withoutSearch,
} from '@/test/chat-fixtures';
import { ChatPage } from './chat-page';

const fetchMock = vi.fn<typeof fetch>();
const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
const emit = vi.fn<typeof chatSocket.emit>();
let plan: Plan = freePlan;
let conversations = [conversation({ title: 'Python notes' })];

function serverFrame(type: string, payload: unknown) {
  act(() => (chatSocket as unknown as { dispatch(t: string, p: unknown): void }).dispatch(type, payload));
}

function SidebarHost() {
  const { attach } = useSidebarHost();
  return <aside ref={attach} data-testid="sidebar" />;
}

function renderAt(path: string) {
  const page = (
    <SidebarSlotProvider>
      <SidebarHost />
      <ChatPage />
    </SidebarSlotProvider>
  );
  const router = createMemoryRouter(
    [
      { path: '/chat', element: page },
      { path: '/chat/:id', element: page },
      { path: '/settings', element: <p>settings</p> },
    ],
    { initialEntries: [path] },
  );
  render(<RouterProvider router={router} />);
  return router;
}

function sentFrames(type: string) {
  return emit.mock.calls.filter(([t]) => t === type).map(([, payload]) => payload as unknown as Record<string, unknown>);
}

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
  plan = freePlan;
  conversations = [conversation({ title: 'Python notes' })];
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset().mockImplementation((input, init) => {
    const path = urlOf(input).replace(/^\/api/, '');
    if (path === '/files' && init?.method === 'POST') {
      const part = (init.body as FormData).get('file') as File;
      // The server tells a document by its content; here, by its name.
      const data = /\.(md|pdf|txt)$/.test(part.name) ? storedDocument({ name: part.name }) : storedFile({ name: part.name });
      return Promise.resolve(jsonResponse(201, { success: true, data }));
    }
    if (path.startsWith('/conversations?')) {
      return Promise.resolve(jsonResponse(200, { success: true, data: conversations, nextCursor: null }));
    }
    if (path === `/conversations/${CONVERSATION_ID}`) {
      return Promise.resolve(
        jsonResponse(200, {
          success: true,
          data: { ...conversations[0], messages: [userMessage(), answer({ content: 'Use **lists**.', status: 'complete' })] },
        }),
      );
    }
    if (path === '/conversations/c-new') {
      // REST may be older than the socket: nothing stored yet as far as it knows.
      return Promise.resolve(jsonResponse(200, { success: true, data: { ...conversation({ _id: 'c-new' }), messages: [] } }));
    }
    if (path === '/subscription') return Promise.resolve(jsonResponse(200, subscriptionAnswer(plan)));
    if (path === '/usage/limits') return Promise.resolve(jsonResponse(200, usageAnswer({ limit: 50, used: 12 })));
    return Promise.resolve(jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
  });
  emit.mockReset().mockReturnValue(true);
  vi.spyOn(chatSocket, 'emit').mockImplementation(emit);
  useAuthStore.setState({ status: 'authenticated', token: 't', user: anna, settings: anna.settings });
  // Every frame reaches its slices through the app's router (as at start-up).
  startSocketRouter();
  useChatStore.getState().reset();
  useSubscriptionStore.getState().reset();
  useAttachmentStore.getState().reset();
  URL.createObjectURL = vi.fn(() => 'blob:preview');
  URL.revokeObjectURL = vi.fn();
  setImageIo(smallImages);
});

/** jsdom decodes no images: every one is a small photo the server takes as it is. */
const smallImages: ImageIo = {
  decode: () => Promise.resolve({ width: 64, height: 48, close: () => undefined }),
  encode: () => Promise.reject(new Error('not needed')),
  convertHeic: () => Promise.reject(new Error('not needed')),
};

const png = (name: string) => new File([new Uint8Array(32)], name, { type: 'image/png' });

describe('the chat page', () => {
  it('lists the conversations and shows the counters of the plan', async () => {
    renderAt('/chat');
    const list = await screen.findByTestId('conversation-list');
    expect(await within(list).findByRole('link', { name: 'Python notes' })).toBeDefined();
    expect(screen.getAllByTestId('conversation-item')).toHaveLength(1);
    expect(await screen.findByText('38 of 50 messages left today')).toBeDefined();
    expect(screen.getByTestId('new-chat-button')).toBeDefined();
    expect(screen.getByRole('heading', { level: 1, name: 'Chat' })).toBeDefined();
  });

  it('loads a conversation, opens it on the socket and renders the answer as Markdown', async () => {
    renderAt(`/chat/${CONVERSATION_ID}`);
    const bubble = await screen.findByTestId('message-assistant');
    expect(bubble.getAttribute('data-status')).toBe('complete');
    expect(bubble.querySelector('strong')?.textContent).toBe('lists');
    expect(screen.getByTestId('message-user').textContent).toContain('Hello there');
    expect(sentFrames('conversation.open')).toContainEqual({ conversationId: CONVERSATION_ID });
    expect(within(screen.getByTestId('conversation-list')).getByRole('link', { current: 'page' })).toBeDefined();
  });

  it('on a free plan, answers web search and attachments with the premium message (SPEC §8)', async () => {
    renderAt('/chat');
    const toggle = await screen.findByTestId('web-search-toggle');
    await vi.waitFor(() => expect(toggle.getAttribute('data-gate')).toBe('premium'));
    fireEvent.click(toggle);
    const notice = await screen.findByTestId('chat-notice');
    expect(notice.textContent).toContain('Web search is a premium feature');
    expect(within(notice).getByRole('link', { name: 'Upgrade plan' }).getAttribute('href')).toBe('/settings#subscription');
    expect(toggle.getAttribute('aria-pressed')).toBe('false');

    // Images are for every plan; documents are premium.
    fireEvent.click(screen.getByRole('button', { name: 'Attach a file' }));
    fireEvent.click(within(screen.getByRole('menu', { name: 'Attach' })).getByRole('menuitem', { name: 'Document' }));
    expect(screen.getByTestId('chat-notice').textContent).toContain('Document upload is a premium feature');
    expect(screen.queryByRole('menu')).toBeNull();
    const select = screen.getByRole<HTMLSelectElement>('combobox', { name: 'Model' });
    expect([...select.options].map((o) => o.value)).toEqual(['gpt-4o-mini']);
  });

  it('keeps the attach button as it was while the server takes no images', async () => {
    plan = withoutImages(freePlan);
    renderAt('/chat');
    const attach = await screen.findByTestId('attach-button');
    await vi.waitFor(() => expect(attach.getAttribute('data-gate')).toBe('premium'));
    expect(attach.getAttribute('aria-haspopup')).toBeNull();
    fireEvent.click(attach);
    expect(screen.queryByRole('menu')).toBeNull();
    expect(screen.getByTestId('chat-notice').textContent).toContain('Document upload is a premium feature');
  });

  it('follows a plan change (subscription.updated): more models, web search unlocked', async () => {
    renderAt('/chat');
    const toggle = await screen.findByTestId('web-search-toggle');
    await vi.waitFor(() => expect(toggle.getAttribute('data-gate')).toBe('premium'));
    serverFrame('subscription.updated', { subscription: subscriptionOn(basePlan) });
    expect(toggle.getAttribute('data-gate')).toBe('available');
    const select = screen.getByRole<HTMLSelectElement>('combobox', { name: 'Model' });
    expect([...select.options].map((o) => o.value)).toEqual(['gpt-4o-mini', 'gpt-4.1-mini']);
  });

  it('on a paid plan, toggles web search into the send and calls attachments "coming soon"', async () => {
    plan = basePlan;
    renderAt('/chat');
    const toggle = await screen.findByTestId('web-search-toggle');
    await vi.waitFor(() => expect(toggle.getAttribute('data-gate')).toBe('available'));
    fireEvent.click(toggle);
    expect(toggle.getAttribute('aria-pressed')).toBe('true');
    fireEvent.click(screen.getByTestId('attach-button'));
    fireEvent.click(screen.getByTestId('attach-document'));
    expect(screen.getByTestId('chat-notice').textContent).toBe(
      'Attaching documents is coming soon. For now, paste their text into your message.',
    );
    expect(within(screen.getByTestId('chat-notice')).queryByRole('link')).toBeNull();

    fireEvent.change(screen.getByRole('combobox', { name: 'Model' }), { target: { value: 'gpt-4.1-mini' } });
    const input = screen.getByTestId('composer-input');
    fireEvent.change(input, { target: { value: '  Search this  ' } });
    fireEvent.keyDown(input, { key: 'Enter' });
    expect(sentFrames('chat.send')[0]).toMatchObject({
      conversationId: null,
      content: 'Search this',
      model: 'gpt-4.1-mini',
      webSearch: true,
    });
  });

  it('sends a deep search with web search, shows its steps as they come and the web sources at the end', async () => {
    plan = basePlan;
    const router = renderAt('/chat');
    const deep = await screen.findByTestId('deep-search-toggle');
    await vi.waitFor(() => expect(deep.getAttribute('data-gate')).toBe('available'));
    const web = screen.getByTestId('web-search-toggle');
    fireEvent.click(deep);
    expect(deep.getAttribute('aria-pressed')).toBe('true');
    expect(web.getAttribute('aria-pressed')).toBe('true');
    expect(screen.getByTestId('deep-search-hint').textContent).toContain('Uses up to 6 web searches.');
    // Web search off ends deep search; deep search on brings both back.
    fireEvent.click(web);
    expect(deep.getAttribute('aria-pressed')).toBe('false');
    fireEvent.click(deep);

    const input = screen.getByTestId('composer-input');
    fireEvent.change(input, { target: { value: 'Write a report on the keeper' } });
    fireEvent.keyDown(input, { key: 'Enter' });
    const [send] = sentFrames('chat.send');
    expect(send).toMatchObject({ content: 'Write a report on the keeper', webSearch: true, deepSearch: true });
    const clientId = send!.clientId as string;
    // For one send: the next one is a plain web search unless chosen again.
    expect(screen.getByTestId('deep-search-toggle').getAttribute('aria-pressed')).toBe('false');
    expect(screen.getByTestId('web-search-toggle').getAttribute('aria-pressed')).toBe('true');

    serverFrame('conversation.created', { clientId, conversation: conversation({ _id: 'c-new', webSearch: true }) });
    await vi.waitFor(() => expect(router.state.location.pathname).toBe('/chat/c-new'));
    const progress = (extra: object) =>
      serverFrame('search.progress', { conversationId: 'c-new', messageId: 'm2', round: 1, rounds: 2, deep: true, ...extra });
    // A step can come before the answer is known here.
    progress({ stage: 'searching', queries: ['keeper code'] });
    serverFrame('message.created', {
      conversationId: 'c-new',
      clientId,
      message: userMessage({ _id: 'm1', conversationId: 'c-new', clientId, content: 'Write a report on the keeper' }),
    });
    serverFrame('message.created', { conversationId: 'c-new', clientId, message: answer({ _id: 'm2', conversationId: 'c-new', clientId }) });
    progress({ stage: 'reading', pages: 1 });
    progress({ stage: 'reflecting' });
    const status = within(screen.getByTestId('message-assistant')).getByRole('status');
    expect(within(status).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      'Searching the web: “keeper code”',
      'Reading 1 page',
      'Weighing what was found (round 1 of 2)',
    ]);

    serverFrame('message.completed', {
      conversationId: 'c-new',
      message: answer({
        _id: 'm2',
        conversationId: 'c-new',
        clientId,
        status: 'complete',
        content: '# The keeper\n\nThe code is LIGHTHOUSE-77 [1].',
        sources: [{ url: 'http://127.0.0.1:9/lighthouse.html', title: 'The lighthouse page', site: '127.0.0.1' }] as never,
      }),
      finishReason: 'stop',
    });
    const bubble = screen.getByTestId('message-assistant');
    expect(within(bubble).queryByRole('status')).toBeNull();
    expect(within(bubble).getByTestId('message-web-source').textContent).toBe('[1] The lighthouse page — 127.0.0.1');
    expect(bubble.querySelector('a[data-citation="1"]')?.getAttribute('href')).toBe('http://127.0.0.1:9/lighthouse.html');
    expect(useChatStore.getState().progress).toEqual({});
  });

  it('creates an image: alone (web and deep search off), for one send, "Creating the image…" until the answer brings it', async () => {
    plan = basePlan;
    const router = renderAt('/chat');
    const image = await screen.findByTestId('image-generation-toggle');
    await vi.waitFor(() => expect(image.getAttribute('data-gate')).toBe('available'));
    const web = screen.getByTestId('web-search-toggle');
    const deep = screen.getByTestId('deep-search-toggle');
    const input = screen.getByTestId<HTMLTextAreaElement>('composer-input');
    // One at a time: image on ends the searches, either search on ends the image.
    fireEvent.click(deep);
    expect([web, deep].map((b) => b.getAttribute('aria-pressed'))).toEqual(['true', 'true']);
    fireEvent.click(image);
    expect([web, deep, image].map((b) => b.getAttribute('aria-pressed'))).toEqual(['false', 'false', 'true']);
    expect(input.placeholder).toBe('Describe the image you want');
    fireEvent.click(web);
    expect([web, image].map((b) => b.getAttribute('aria-pressed'))).toEqual(['true', 'false']);
    expect(input.placeholder).toBe('Write a message…');
    fireEvent.click(image);
    expect(web.getAttribute('aria-pressed')).toBe('false');
    fireEvent.click(deep);
    expect([web, deep, image].map((b) => b.getAttribute('aria-pressed'))).toEqual(['true', 'true', 'false']);
    fireEvent.click(image);

    fireEvent.change(input, { target: { value: 'A red fox in the snow' } });
    fireEvent.keyDown(input, { key: 'Enter' });
    const [send] = sentFrames('chat.send');
    expect(send).toMatchObject({ content: 'A red fox in the snow', imageGeneration: true, webSearch: false, deepSearch: false });
    const clientId = send!.clientId as string;
    // For one send: the next message is a message again.
    expect(screen.getByTestId('image-generation-toggle').getAttribute('aria-pressed')).toBe('false');
    expect(screen.getByTestId<HTMLTextAreaElement>('composer-input').placeholder).toBe('Write a message…');

    serverFrame('conversation.created', { clientId, conversation: conversation({ _id: 'c-new' }) });
    await vi.waitFor(() => expect(router.state.location.pathname).toBe('/chat/c-new'));
    serverFrame('message.created', {
      conversationId: 'c-new',
      clientId,
      message: userMessage({ _id: 'm1', conversationId: 'c-new', clientId, content: 'A red fox in the snow' }),
    });
    // This tab knows its send asked for an image, whatever the answer's model is called.
    serverFrame('message.created', {
      conversationId: 'c-new',
      clientId,
      message: answer({ _id: 'm2', conversationId: 'c-new', clientId, model: 'some-image-model' }),
    });
    const bubble = screen.getByTestId('message-assistant');
    const status = within(bubble).getByRole('status');
    expect(status.textContent).toBe('Creating the image…');
    expect(status.getAttribute('aria-live')).toBe('polite');
    expect(bubble.querySelector('[class*="typing"]')).toBeNull();
    expect(bubble.getAttribute('aria-busy')).toBeNull();

    serverFrame('message.delta', { conversationId: 'c-new', messageId: 'm2', seq: 1, delta: 'Here is the image: *A red fox in the snow*' });
    expect(within(bubble).queryByRole('status')).toBeNull();
    const file = storedFile({
      _id: 'img1',
      name: 'a-red-fox-in-the-snow.jpg',
      mime: 'image/jpeg',
      width: 256,
      height: 256,
    });
    serverFrame('message.completed', {
      conversationId: 'c-new',
      message: answer({
        _id: 'm2',
        conversationId: 'c-new',
        clientId,
        model: 'some-image-model',
        status: 'complete',
        content: 'Here is the image: *A red fox in the snow*',
        attachments: [file],
      }),
      finishReason: 'stop',
    });
    const done = screen.getByTestId('message-assistant');
    expect(within(done).getByText('A red fox in the snow').tagName).toBe('EM');
    const img = within(done).getByRole<HTMLImageElement>('img', { name: 'a-red-fox-in-the-snow.jpg' });
    expect(img.getAttribute('src')).toBe('/api/files/img1/thumbnail');
    expect([img.getAttribute('width'), img.getAttribute('height')]).toEqual(['256', '256']);
    const download = within(done).getByRole('link', { name: 'Download: a-red-fox-in-the-snow.jpg' });
    expect(download.textContent).toBe('Download');
    expect(download.getAttribute('href')).toBe('/api/files/img1');
    expect(download.getAttribute('download')).toBe('a-red-fox-in-the-snow.jpg');
    // A click on the image opens it whole, as a user's image does.
    fireEvent.click(within(done).getByRole('link', { name: 'Open a-red-fox-in-the-snow.jpg' }));
    expect(screen.getByTestId<HTMLImageElement>('lightbox-image').getAttribute('src')).toBe('/api/files/img1');
  });

  it('shows another tab’s image answer as one (its model is the plan’s image model), in Hungarian too', async () => {
    plan = basePlan;
    await i18n.changeLanguage('hu-HU');
    renderAt(`/chat/${CONVERSATION_ID}`);
    await screen.findByText('lists');
    serverFrame('message.created', {
      conversationId: CONVERSATION_ID,
      clientId: 'other-tab',
      message: userMessage({ _id: 'm3', clientId: 'other-tab', content: 'Egy vörös róka', createdAt: '2025-03-14T10:16:00.000+00:00' }),
    });
    await vi.waitFor(() => expect(useSubscriptionStore.getState().subscription).not.toBeNull());
    serverFrame('message.created', {
      conversationId: CONVERSATION_ID,
      clientId: 'other-tab',
      message: answer({ _id: 'm4', clientId: 'other-tab', model: 'gpt-image-1', createdAt: '2025-03-14T10:16:00.001+00:00' }),
    });
    const bubble = screen.getAllByTestId('message-assistant').at(-1)!;
    expect(within(bubble).getByRole('status').textContent).toBe('A kép készül…');
    serverFrame('message.completed', {
      conversationId: CONVERSATION_ID,
      message: answer({
        _id: 'm4',
        clientId: 'other-tab',
        model: 'gpt-image-1',
        status: 'complete',
        content: 'Here is the image: *Egy vörös róka*',
        createdAt: '2025-03-14T10:16:00.001+00:00',
        attachments: [storedFile({ _id: 'img2', name: 'egy-voros-roka.jpg', mime: 'image/jpeg', width: 256, height: 256 })],
      }),
      finishReason: 'stop',
    });
    const done = screen.getAllByTestId('message-assistant').at(-1)!;
    expect(within(done).getByRole('link', { name: 'Letöltés: egy-voros-roka.jpg' }).textContent).toBe('Letöltés');
  });

  it('puts a refused image back (text and toggle), with "Upgrade plan" for a reached image limit', async () => {
    plan = basePlan;
    renderAt('/chat');
    const image = await screen.findByTestId('image-generation-toggle');
    await vi.waitFor(() => expect(image.getAttribute('data-gate')).toBe('available'));
    fireEvent.click(image);
    const input = screen.getByTestId<HTMLTextAreaElement>('composer-input');
    fireEvent.change(input, { target: { value: 'A red fox' } });
    fireEvent.keyDown(input, { key: 'Enter' });
    expect(screen.getByTestId('image-generation-toggle').getAttribute('aria-pressed')).toBe('false');
    const clientId = sentFrames('chat.send')[0]!.clientId;
    serverFrame('error', {
      clientId,
      code: 'image_limit_reached',
      message: 'You have reached your image generation limit. Upgrade your plan to continue.',
    });
    const error = screen.getByTestId('chat-error');
    expect(error.textContent).toContain('You have reached your image generation limit.');
    expect(within(error).getByRole('link', { name: 'Upgrade plan' }).getAttribute('href')).toBe('/settings#subscription');
    expect(screen.getByTestId<HTMLTextAreaElement>('composer-input').value).toBe('A red fox');
    expect(screen.getByTestId('image-generation-toggle').getAttribute('aria-pressed')).toBe('true');
    expect(screen.getByTestId('web-search-toggle').getAttribute('aria-pressed')).toBe('false');
  });

  it('answers "Create image" on a free plan with the premium message and the way to upgrade, in both languages', async () => {
    renderAt('/chat');
    const image = await screen.findByTestId('image-generation-toggle');
    await vi.waitFor(() => expect(image.getAttribute('data-gate')).toBe('premium'));
    fireEvent.click(image);
    const notice = screen.getByTestId('chat-notice');
    expect(notice.textContent).toContain('Image generation is a premium feature');
    expect(within(notice).getByRole('link', { name: 'Upgrade plan' }).getAttribute('href')).toBe('/settings#subscription');
    expect(image.getAttribute('aria-pressed')).toBe('false');
    expect(sentFrames('chat.send')).toEqual([]);
    await act(() => i18n.changeLanguage('hu-HU'));
    expect(screen.getByTestId('chat-notice').textContent).toContain('A képgenerálás prémium funkció');
  });

  it('on a server without a search provider, says web search is not set up, and learns it from a refused send', async () => {
    plan = withoutSearch(basePlan);
    renderAt('/chat');
    const toggle = await screen.findByTestId<HTMLButtonElement>('web-search-toggle');
    await vi.waitFor(() => expect(toggle.getAttribute('data-gate')).toBe('unconfigured'));
    expect(toggle.disabled).toBe(true);
    expect(screen.getByTestId('web-search-unconfigured').textContent).toBe('Web search is not set up on this server');
    // Told that the server searches, then its provider is gone: the refused send reloads the plan.
    act(() => useSubscriptionStore.getState().applySubscription(subscriptionAnswer(basePlan)));
    await vi.waitFor(() => expect(toggle.getAttribute('data-gate')).toBe('available'));
    plan = withoutSearch(basePlan);
    fireEvent.click(toggle);
    const input = screen.getByTestId('composer-input');
    fireEvent.change(input, { target: { value: 'Search this' } });
    fireEvent.keyDown(input, { key: 'Enter' });
    const clientId = sentFrames('chat.send')[0]!.clientId;
    serverFrame('error', { clientId, code: 'search_unavailable', message: 'Web search is not set up on this server' });
    expect(screen.getByTestId('chat-error').textContent).toContain('Web search is not set up on this server');
    expect(within(screen.getByTestId('chat-error')).queryByRole('link', { name: 'Upgrade plan' })).toBeNull();
    await vi.waitFor(() => expect(toggle.getAttribute('data-gate')).toBe('unconfigured'));
  });

  it('sends with Enter, streams the answer live and stops it', async () => {
    const router = renderAt('/chat');
    const input = await screen.findByTestId('composer-input');
    fireEvent.change(input, { target: { value: 'Line one' } });
    fireEvent.keyDown(input, { key: 'Enter', shiftKey: true });
    expect(sentFrames('chat.send')).toEqual([]);
    fireEvent.keyDown(input, { key: 'Enter' });
    const [send] = sentFrames('chat.send');
    const clientId = send!.clientId as string;
    expect(screen.getByTestId('message-user').getAttribute('data-pending')).toBe('true');

    const created = conversation({ _id: 'c-new' });
    serverFrame('conversation.created', { clientId, conversation: created });
    await vi.waitFor(() => expect(router.state.location.pathname).toBe('/chat/c-new'));
    serverFrame('message.created', {
      conversationId: 'c-new',
      clientId,
      message: userMessage({ _id: 'm1', conversationId: 'c-new', clientId, content: 'Line one' }),
    });
    serverFrame('message.created', {
      conversationId: 'c-new',
      clientId,
      message: answer({ _id: 'm2', conversationId: 'c-new', clientId }),
    });
    serverFrame('message.delta', { conversationId: 'c-new', messageId: 'm2', seq: 1, delta: 'Hello ' });
    serverFrame('message.delta', { conversationId: 'c-new', messageId: 'm2', seq: 2, delta: '*world*' });
    const bubble = await screen.findByTestId('message-assistant');
    expect(bubble.getAttribute('data-status')).toBe('streaming');
    await vi.waitFor(() => expect(bubble.querySelector('em')?.textContent).toBe('world'));
    expect(screen.queryByTestId('send-button')).toBeNull();

    fireEvent.click(screen.getByTestId('stop-button'));
    expect(sentFrames('chat.cancel')).toEqual([{ conversationId: 'c-new' }]);
    serverFrame('message.completed', {
      conversationId: 'c-new',
      message: answer({ _id: 'm2', conversationId: 'c-new', clientId, content: 'Hello *world*', status: 'cancelled' }),
      finishReason: 'cancelled',
    });
    expect(screen.getByTestId('message-assistant').getAttribute('data-status')).toBe('cancelled');
    expect(screen.getByTestId('send-button')).toBeDefined();
  });

  it('shows a refused send near the composer, with "Upgrade plan" for a reached limit', async () => {
    renderAt('/chat');
    const input = await screen.findByTestId<HTMLTextAreaElement>('composer-input');
    fireEvent.change(input, { target: { value: 'One more' } });
    fireEvent.click(screen.getByTestId('send-button'));
    const clientId = sentFrames('chat.send')[0]!.clientId;
    serverFrame('error', {
      clientId,
      code: 'limit_reached',
      message: 'Elérte a napi üzenetkorlátját. A folytatáshoz váltson nagyobb csomagra.',
      field: 'day',
    });
    const error = screen.getByTestId('chat-error');
    expect(error.textContent).toContain('Elérte a napi üzenetkorlátját.');
    expect(within(error).getByRole('link', { name: 'Upgrade plan' }).getAttribute('href')).toBe('/settings#subscription');
    expect(input.value).toBe('One more');
    expect(screen.queryByTestId('message-user')).toBeNull();
  });

  it('offers "Try again" for a send the server could not take now, which sends the same question again', async () => {
    renderAt('/chat');
    const input = await screen.findByTestId<HTMLTextAreaElement>('composer-input');
    fireEvent.change(input, { target: { value: 'Is the model back?' } });
    fireEvent.click(screen.getByTestId('send-button'));
    const [first] = sentFrames('chat.send');
    serverFrame('error', { clientId: first!.clientId, code: 'service_unavailable', message: 'The service is unavailable.' });
    // No "Upgrade plan" for an outage, and the limit refusal above has no "Try again".
    const error = screen.getByTestId('chat-error');
    expect(within(error).queryByRole('link', { name: 'Upgrade plan' })).toBeNull();
    fireEvent.click(within(error).getByRole('button', { name: 'Try again' }));
    const sends = sentFrames('chat.send');
    expect(sends).toHaveLength(2);
    expect(sends[1]).toMatchObject({ content: 'Is the model back?', conversationId: null, model: first!.model, webSearch: first!.webSearch });
    expect(sends[1]!.clientId).not.toBe(first!.clientId);
    expect(screen.queryByTestId('chat-error')).toBeNull();
    expect(screen.getByTestId('message-user').getAttribute('data-pending')).toBe('true');
  });

  it('offers "Try again" (Próbálja újra) when the send could not leave, and none for a refusal about the message', async () => {
    await i18n.changeLanguage('hu-HU');
    renderAt('/chat');
    const input = await screen.findByTestId<HTMLTextAreaElement>('composer-input');
    fireEvent.change(input, { target: { value: 'Szia' } });
    emit.mockReturnValueOnce(false);
    fireEvent.click(screen.getByTestId('send-button'));
    expect(sentFrames('chat.send')).toHaveLength(1);
    fireEvent.click(within(screen.getByTestId('chat-error')).getByRole('button', { name: 'Próbálja újra' }));
    expect(sentFrames('chat.send')).toHaveLength(2);
    expect(sentFrames('chat.send')[1]).toMatchObject({ content: 'Szia' });

    serverFrame('error', { clientId: sentFrames('chat.send')[1]!.clientId, code: 'message_too_long', message: 'Túl hosszú' });
    expect(within(screen.getByTestId('chat-error')).queryByRole('button', { name: 'Próbálja újra' })).toBeNull();
  });

  it('keeps the list live: created and renamed elsewhere, usage updated', async () => {
    renderAt('/chat');
    const list = await screen.findByTestId('conversation-list');
    await within(list).findByRole('link', { name: 'Python notes' });
    serverFrame('conversation.created', {
      clientId: 'other-tab',
      conversation: conversation({ _id: 'c-other', updatedAt: '2025-03-15T00:00:00.000+00:00' }),
    });
    serverFrame('conversation.updated', {
      conversation: conversation({ _id: 'c-other', title: 'From the other tab', updatedAt: '2025-03-15T00:00:00.000+00:00' }),
    });
    const items = within(list).getAllByTestId('conversation-item');
    expect(items.map((item) => item.textContent)).toEqual(['From the other tab', 'Python notes']);
    serverFrame('usage.updated', usageAnswer({ limit: 50, used: 50 }));
    expect(screen.getByTestId('usage-counter').textContent).toContain('You have reached your daily message limit.');
  });

  it('attaches a picked image, sends it alone and shows it in the conversation (free plan: one a message)', async () => {
    const router = renderAt('/chat');
    await vi.waitFor(() => expect(screen.getByTestId('attach-button').getAttribute('data-gate')).toBe('menu'));
    const input = screen.getByTestId<HTMLInputElement>('attach-photos-input');
    fireEvent.change(input, { target: { files: [png('cat.png'), png('dog.png')] } });
    expect(screen.getByTestId('attachment-refusal').textContent).toBe('You can attach at most 1 images to a message');
    const preview = screen.getByTestId('attachment-preview');
    await vi.waitFor(() => expect(preview.getAttribute('data-status')).toBe('ready'));
    const send = screen.getByTestId<HTMLButtonElement>('send-button');
    expect(send.disabled).toBe(false);
    fireEvent.click(send);

    const [frame] = sentFrames('chat.send');
    expect(frame).toMatchObject({ conversationId: null, content: '', attachments: ['f1'] });
    expect(screen.queryByTestId('attachment-preview')).toBeNull();
    const pending = screen.getByTestId('message-user');
    expect(pending.getAttribute('data-pending')).toBe('true');
    expect(within(pending).getByRole('img', { name: 'cat.png' }).getAttribute('src')).toBe('blob:preview');

    const clientId = frame!.clientId as string;
    serverFrame('conversation.created', { clientId, conversation: conversation({ _id: 'c-new' }) });
    await vi.waitFor(() => expect(router.state.location.pathname).toBe('/chat/c-new'));
    serverFrame('message.created', {
      conversationId: 'c-new',
      clientId,
      message: userMessage({ _id: 'm1', conversationId: 'c-new', clientId, content: '', attachments: [storedFile()] }),
    });
    const sent = screen.getByTestId('message-user');
    expect(sent.getAttribute('data-pending')).toBeNull();
    expect(within(sent).getByRole('img', { name: 'cat.png' }).getAttribute('src')).toBe('/api/files/f1/thumbnail');
  });

  it('gives the images back when the server refuses the send', async () => {
    renderAt(`/chat/${CONVERSATION_ID}`);
    await screen.findByTestId('message-assistant');
    fireEvent.change(screen.getByTestId('attach-photos-input'), { target: { files: [png('cat.png')] } });
    await vi.waitFor(() => expect(screen.getByTestId('attachment-preview').getAttribute('data-status')).toBe('ready'));
    fireEvent.click(screen.getByTestId('send-button'));
    const clientId = sentFrames('chat.send')[0]!.clientId;
    serverFrame('error', { clientId, code: 'too_many_images', message: 'You can attach at most 1 images to a message' });
    expect(screen.getByTestId('chat-error').textContent).toContain('You can attach at most 1 images to a message');
    expect(within(screen.getByTestId('chat-error')).getByRole('link', { name: 'Upgrade plan' })).toBeDefined();
    expect(screen.getByTestId('attachment-preview').getAttribute('data-status')).toBe('ready');
  });

  it('takes images dropped on the conversation', async () => {
    renderAt(`/chat/${CONVERSATION_ID}`);
    await screen.findByTestId('message-assistant');
    await vi.waitFor(() => expect(screen.getByTestId('attach-button').getAttribute('data-gate')).toBe('menu'));
    const view = screen.getByTestId('conversation-view');
    const dataTransfer = { types: ['Files'], files: [png('dropped.png')], dropEffect: 'none' };
    fireEvent.dragEnter(view, { dataTransfer });
    expect(screen.getByTestId('drop-overlay').textContent).toBe('Drop images here to attach them');
    fireEvent.drop(view, { dataTransfer });
    expect(screen.queryByTestId('drop-overlay')).toBeNull();
    expect(within(screen.getByTestId('attachment-tray')).getByRole('img', { name: 'dropped.png' })).toBeDefined();
  });

  it('answers a dropped file with the document notice while the server takes no images', async () => {
    plan = withoutImages(freePlan);
    renderAt('/chat');
    await vi.waitFor(() => expect(screen.getByTestId('attach-button').getAttribute('data-gate')).toBe('premium'));
    fireEvent.drop(screen.getByTestId('conversation-view'), { dataTransfer: { types: ['Files'], files: [png('a.png')] } });
    expect(screen.getByTestId('chat-notice').textContent).toContain('Document upload is a premium feature');
    expect(screen.queryByTestId('attachment-tray')).toBeNull();
  });

  it('attaches a document, waits while it is read, sends it and shows the answer’s sources', async () => {
    plan = withDocuments(basePlan);
    const router = renderAt('/chat');
    await vi.waitFor(() => expect(screen.getByTestId('attach-button').getAttribute('data-gate')).toBe('menu'));
    const notes = new File(['# Notes\nThe secret harbour code is LIGHTHOUSE-42.'], 'notes.md');
    fireEvent.change(screen.getByTestId('attach-document-input'), { target: { files: [notes] } });
    const chip = screen.getByTestId('attachment-preview');
    expect(chip.getAttribute('data-kind')).toBe('document');
    await vi.waitFor(() => expect(chip.getAttribute('data-status')).toBe('processing'));
    fireEvent.change(screen.getByTestId('composer-input'), { target: { value: 'What is the secret harbour code?' } });
    const send = screen.getByTestId<HTMLButtonElement>('send-button');
    expect(send.disabled).toBe(true);

    serverFrame('file.updated', { file: storedDocument({ name: 'notes.md', progress: 50 }) });
    expect(within(chip).getByRole('progressbar').getAttribute('aria-valuenow')).toBe('50');
    serverFrame('file.updated', { file: storedDocument({ name: 'notes.md', status: 'ready', progress: 100, pages: null }) });
    expect(chip.getAttribute('data-status')).toBe('ready');
    expect(send.disabled).toBe(false);
    fireEvent.click(send);

    const [frame] = sentFrames('chat.send');
    expect(frame).toMatchObject({ content: 'What is the secret harbour code?', attachments: ['d1'] });
    expect(within(screen.getByTestId('message-user')).getByTestId('message-document').textContent).toContain('notes.md');

    const clientId = frame!.clientId as string;
    serverFrame('conversation.created', { clientId, conversation: conversation({ _id: 'c-new' }) });
    await vi.waitFor(() => expect(router.state.location.pathname).toBe('/chat/c-new'));
    const sentDoc = storedDocument({ name: 'notes.md', status: 'ready', progress: 100, pages: null });
    serverFrame('message.created', {
      conversationId: 'c-new',
      clientId,
      message: userMessage({ _id: 'm1', conversationId: 'c-new', clientId, content: 'What is the secret harbour code?', attachments: [sentDoc] }),
    });
    serverFrame('message.created', { conversationId: 'c-new', clientId, message: answer({ _id: 'm2', conversationId: 'c-new', clientId }) });
    serverFrame('message.completed', {
      conversationId: 'c-new',
      message: answer({
        _id: 'm2',
        conversationId: 'c-new',
        clientId,
        content: 'The secret harbour code is LIGHTHOUSE-42.',
        status: 'complete',
        sources: [{ fileId: 'd1', name: 'notes.md', page: null }],
      }),
      finishReason: 'stop',
    });
    expect(screen.getByTestId('message-sources').textContent).toBe('Sources: notes.md');
    expect(within(screen.getByTestId('message-sources')).getByRole('link').getAttribute('href')).toBe('/api/files/d1');
  });

  it('asks for a document still being read when the socket is ready again (its end may have been missed)', async () => {
    plan = withDocuments(basePlan);
    const before = fetchMock.getMockImplementation()!;
    fetchMock.mockImplementation((input, init) =>
      urlOf(input) === '/api/files/d1/info'
        ? Promise.resolve(jsonResponse(200, { success: true, data: storedDocument({ name: 'notes.md', status: 'ready', progress: 100 }) }))
        : before(input, init),
    );
    renderAt('/chat');
    await vi.waitFor(() => expect(screen.getByTestId('attach-button').getAttribute('data-gate')).toBe('menu'));
    fireEvent.change(screen.getByTestId('attach-document-input'), { target: { files: [new File(['# Notes'], 'notes.md')] } });
    const chip = screen.getByTestId('attachment-preview');
    await vi.waitFor(() => expect(chip.getAttribute('data-status')).toBe('processing'));
    fireEvent.change(screen.getByTestId('composer-input'), { target: { value: 'Summarize it' } });
    expect(screen.getByTestId<HTMLButtonElement>('send-button').disabled).toBe(true);

    // A session's first `ready` follows the page's own loads; a later one is a reconnect.
    const ready = { user: anna, usage: usageAnswer({ limit: 50, used: 12 }) };
    serverFrame('ready', ready);
    serverFrame('ready', ready);
    await vi.waitFor(() => expect(chip.getAttribute('data-status')).toBe('ready'));
    expect(screen.getByTestId<HTMLButtonElement>('send-button').disabled).toBe(false);
  });

  it('takes a document dropped on the conversation when the plan does, else shows the premium message', async () => {
    plan = withDocuments(freePlan);
    renderAt('/chat');
    await vi.waitFor(() => expect(screen.getByTestId('attach-button').getAttribute('data-gate')).toBe('menu'));
    const view = screen.getByTestId('conversation-view');
    const report = new File(['%PDF'], 'report.pdf', { type: 'application/pdf' });
    fireEvent.drop(view, { dataTransfer: { types: ['Files'], files: [report] } });
    expect(screen.getByTestId('chat-notice').textContent).toContain('Document upload is a premium feature');
    expect(screen.queryByTestId('attachment-tray')).toBeNull();

    serverFrame('subscription.updated', { subscription: subscriptionOn(withDocuments(basePlan)) });
    fireEvent.dragEnter(view, { dataTransfer: { types: ['Files'], files: [report] } });
    expect(screen.getByTestId('drop-overlay').textContent).toBe('Drop images or documents here to attach them');
    fireEvent.drop(view, { dataTransfer: { types: ['Files'], files: [report] } });
    expect(within(screen.getByTestId('attachment-tray')).getByTestId('attachment-preview').getAttribute('data-kind')).toBe('document');
  });
});
