import { beforeEach, describe, expect, it, vi } from 'vitest';
import { chatSocket } from '@/lib/socket';
import type { ClientFrames, ServerFrames } from '@/lib/socket-protocol';
import { jsonResponse } from '@/test/fixtures';
import { answer, conversation, CONVERSATION_ID, storedFile, userMessage } from '@/test/chat-fixtures';
import { useAttachmentStore } from '../attachments';
import { MAX_PROGRESS_ENTRIES, NEW_CHAT, STALE_RECHECK_MS, useChatStore } from '.';

const fetchMock = vi.fn<typeof fetch>();
const urlOf = (input: RequestInfo | URL) =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
const chat = () => useChatStore.getState();
const emit = vi.fn<typeof chatSocket.emit>();
const ANSWER_ID = answer()._id;

function route(handler: (method: string, path: string) => Response | undefined) {
  fetchMock.mockImplementation((input, init) => {
    const path = urlOf(input).replace(/^\/api/, '');
    const response = handler(init?.method ?? 'GET', path);
    return Promise.resolve(response ?? jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
  });
}

/** This tab sent a first message from the new chat; returns its clientId. */
function sendFromNewChat(content = 'Hello there'): string {
  chat().setDraft(NEW_CHAT, content);
  const clientId = chat().send({ conversationId: null, content, model: 'gpt-4o-mini', webSearch: false });
  expect(clientId).not.toBeNull();
  return clientId!;
}

beforeEach(() => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  route(() => undefined);
  emit.mockReset().mockReturnValue(true);
  vi.spyOn(chatSocket, 'emit').mockImplementation(emit);
  chat().reset();
});

/** A `chat.send` frame as the store emits it: every field named, the defaults for the rest. */
function sendFrame(frame: Pick<ClientFrames['chat.send'], 'clientId'> & Partial<ClientFrames['chat.send']>): ClientFrames['chat.send'] {
  return {
    conversationId: null,
    content: '',
    model: null,
    webSearch: false,
    deepSearch: false,
    imageGeneration: false,
    projectId: null,
    attachments: [],
    editOf: null,
    ...frame,
  };
}

describe('sending', () => {
  it('emits chat.send with a fresh clientId and shows the message as pending', () => {
    const clientId = sendFromNewChat();
    expect(emit).toHaveBeenCalledWith('chat.send', sendFrame({
      clientId,
      conversationId: null,
      content: 'Hello there',
      model: 'gpt-4o-mini',
      webSearch: false,
    }));
    expect(chat().pending[clientId]).toMatchObject({ conversationId: null, content: 'Hello there' });
    expect(chat().drafts[NEW_CHAT]).toBe('');
  });

  it('sends the ids of its images, even with no text, and shows their previews until the server’s message', () => {
    URL.revokeObjectURL = vi.fn();
    const attachments = [
      { file: storedFile({ _id: 'f1' }), previewUrl: 'blob:one' },
      { file: storedFile({ _id: 'f2', name: 'dog.jpg' }), previewUrl: 'blob:two' },
    ];
    const clientId = chat().send({ conversationId: CONVERSATION_ID, content: '', model: null, webSearch: false, attachments })!;
    expect(emit).toHaveBeenCalledWith('chat.send', sendFrame({
      clientId,
      conversationId: CONVERSATION_ID,
      content: '',
      webSearch: false,
      attachments: ['f1', 'f2'],
    }));
    expect(chat().pending[clientId]?.attachments).toBe(attachments);

    chat().onMessageCreated({
      conversationId: CONVERSATION_ID,
      clientId,
      message: userMessage({ clientId, content: '', attachments: attachments.map((a) => a.file) }),
    });
    expect(chat().pending[clientId]).toBeUndefined();
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:one');
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:two');
  });

  it('gives a refused send’s images back to the composer with its text', () => {
    useAttachmentStore.getState().reset();
    const attachments = [{ file: storedFile(), previewUrl: 'blob:one' }];
    const clientId = chat().send({ conversationId: null, content: 'Look', model: null, webSearch: false, attachments })!;
    chat().onError({ clientId, code: 'too_many_images', message: 'You can attach at most 1 images to a message' });
    expect(chat().drafts[NEW_CHAT]).toBe('Look');
    expect(useAttachmentStore.getState().items[NEW_CHAT]).toMatchObject([
      { status: 'ready', file: { _id: 'f1' }, previewUrl: 'blob:one' },
    ]);
  });

  it('keeps the text and says so when the socket is down (nothing is queued)', () => {
    emit.mockReturnValue(false);
    chat().setDraft(NEW_CHAT, 'Hi');
    expect(chat().send({ conversationId: null, content: 'Hi', model: null, webSearch: false })).toBeNull();
    expect(chat().pending).toEqual({});
    expect(chat().drafts[NEW_CHAT]).toBe('Hi');
    expect(chat().errors[NEW_CHAT]).toEqual({ code: 'offline', resend: true });
  });

  it('follows its own new conversation: created, then both messages, deltas and the end', () => {
    const clientId = sendFromNewChat();
    chat().onConversationCreated({ clientId, conversation: conversation() });
    expect(chat().createdFor[clientId]).toBe(CONVERSATION_ID);
    expect(chat().list.items.map((c) => c._id)).toEqual([CONVERSATION_ID]);
    expect(chat().pending[clientId]?.conversationId).toBe(CONVERSATION_ID);

    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: userMessage({ clientId }) });
    expect(chat().pending[clientId]).toBeUndefined();
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: answer({ clientId }) });
    chat().onMessageDelta({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq: 1, delta: 'Hi' });
    chat().onMessageDelta({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq: 1, delta: 'Hi' });
    chat().onMessageDelta({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq: 2, delta: '!' });
    expect(chat().threads[CONVERSATION_ID]!.messages[1]).toMatchObject({ content: 'Hi!', status: 'streaming' });

    chat().onMessageCompleted({
      conversationId: CONVERSATION_ID,
      message: answer({ clientId, content: 'Hi!', status: 'complete' }),
      finishReason: 'stop',
    });
    expect(chat().threads[CONVERSATION_ID]!.messages[1]).toMatchObject({ content: 'Hi!', final: true });
  });

  it('puts a refused send back into the composer with the server’s message', () => {
    const clientId = sendFromNewChat('Too much');
    chat().onError({
      clientId,
      code: 'limit_reached',
      message: 'You have reached your daily message limit. Upgrade your plan to continue.',
      field: 'day',
    });
    expect(chat().pending).toEqual({});
    expect(chat().drafts[NEW_CHAT]).toBe('Too much');
    expect(chat().errors[NEW_CHAT]).toEqual({
      code: 'limit_reached',
      message: 'You have reached your daily message limit. Upgrade your plan to continue.',
      field: 'day',
      // Its text is back in the composer: sending it again is the retry.
      resend: true,
    });
  });

  it('shows a model error in the conversation of the failed answer', () => {
    chat().onConversationCreated({ clientId: 'other', conversation: conversation() });
    route((method, path) =>
      method === 'GET' && path === `/conversations/${CONVERSATION_ID}`
        ? jsonResponse(200, { success: true, data: { ...conversation(), messages: [userMessage({ clientId: 'e1' })] } })
        : undefined,
    );
    return chat()
      .loadThread(CONVERSATION_ID)
      .then(() => {
        chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId: 'e1', message: answer({ clientId: 'e1' }) });
        chat().onMessageCompleted({
          conversationId: CONVERSATION_ID,
          message: answer({ clientId: 'e1', status: 'error' }),
          finishReason: 'error',
        });
        chat().onError({ clientId: 'e1', code: 'model_error', message: 'The AI model is not available right now.' });
        expect(chat().errors[CONVERSATION_ID]?.code).toBe('model_error');
      });
  });

  it('ends an answer whose send failed after it was announced (no message.completed comes)', async () => {
    route((method, path) =>
      method === 'GET' && path === `/conversations/${CONVERSATION_ID}`
        ? jsonResponse(200, { success: true, data: { ...conversation(), messages: [] } })
        : undefined,
    );
    await chat().loadThread(CONVERSATION_ID);
    const clientId = chat().send({ conversationId: CONVERSATION_ID, content: 'x', model: null, webSearch: false })!;
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: userMessage({ clientId }) });
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: answer({ clientId }) });
    chat().onError({ clientId, code: 'generation_in_progress', message: 'An answer is still being written' });
    const thread = chat().threads[CONVERSATION_ID]!;
    expect(thread.messages[1]).toMatchObject({ status: 'error', final: true });
    expect(chat().errors[CONVERSATION_ID]?.code).toBe('generation_in_progress');
  });

  it('sends chat.cancel and waits for the answer’s end', () => {
    chat().cancel(CONVERSATION_ID);
    expect(emit).toHaveBeenCalledWith('chat.cancel', { conversationId: CONVERSATION_ID });
    expect(chat().cancelling[CONVERSATION_ID]).toBe(true);
    chat().onMessageCompleted({
      conversationId: CONVERSATION_ID,
      message: answer({ status: 'cancelled', content: 'Par' }),
      finishReason: 'cancelled',
    });
    expect(chat().cancelling[CONVERSATION_ID]).toBeUndefined();
  });
});

describe('another tab', () => {
  it('adds a conversation created elsewhere to the list, without loading its messages', () => {
    chat().onConversationCreated({ clientId: 'not-mine', conversation: conversation({ title: null }) });
    expect(chat().list.items).toHaveLength(1);
    expect(chat().threads[CONVERSATION_ID]).toBeUndefined();
    expect(chat().createdFor).toEqual({});
  });

  it('streams into a shown conversation: the snapshot, then live deltas', async () => {
    route((method, path) =>
      method === 'GET' && path === `/conversations/${CONVERSATION_ID}`
        ? jsonResponse(200, { success: true, data: { ...conversation(), messages: [userMessage(), answer()] } })
        : undefined,
    );
    const loading = chat().loadThread(CONVERSATION_ID);
    // The snapshot can beat the REST answer.
    chat().onMessageDelta({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq: 1, delta: 'ignored' });
    chat().onMessageSnapshot({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq: 2, content: 'ab' });
    chat().onConversationOpened({ conversationId: CONVERSATION_ID, streaming: true });
    await loading;
    chat().onMessageDelta({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq: 3, delta: 'c' });
    const messages = chat().threads[CONVERSATION_ID]!.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(messages[1]).toMatchObject({ content: 'abc', seq: 3 });
  });

  it('reports a gap so the conversation is opened again', () => {
    // A conversation this tab created is loaded from the start.
    const clientId = sendFromNewChat('x');
    chat().onConversationCreated({ clientId, conversation: conversation() });
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: answer({ clientId }) });
    expect(chat().onMessageDelta({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq: 1, delta: 'a' })).toBe(false);
    expect(chat().onMessageDelta({ conversationId: CONVERSATION_ID, messageId: ANSWER_ID, seq: 3, delta: 'c' })).toBe(true);
  });

  it('removes a deleted conversation and marks it deleted for the view', async () => {
    route((method, path) =>
      method === 'GET' && path === `/conversations/${CONVERSATION_ID}`
        ? jsonResponse(200, { success: true, data: { ...conversation(), messages: [userMessage()] } })
        : undefined,
    );
    chat().onConversationCreated({ clientId: 'x', conversation: conversation() });
    await chat().loadThread(CONVERSATION_ID);
    chat().onConversationDeleted({ conversationId: CONVERSATION_ID });
    expect(chat().list.items).toEqual([]);
    expect(chat().threads[CONVERSATION_ID]?.status).toBe('deleted');
    expect(chat().deletedHere[CONVERSATION_ID]).toBeUndefined();
    // A late message.completed of the stopped answer is ignored.
    chat().onMessageCompleted({ conversationId: CONVERSATION_ID, message: answer({ status: 'cancelled' }), finishReason: 'cancelled' });
    expect(chat().threads[CONVERSATION_ID]?.messages).toEqual([]);
  });

  it('marks an answer whose server was lost once a reload still shows it streaming', async () => {
    vi.useFakeTimers();
    try {
      route((method, path) =>
        method === 'GET' && path === `/conversations/${CONVERSATION_ID}`
          ? jsonResponse(200, { success: true, data: { ...conversation(), messages: [userMessage(), answer()] } })
          : undefined,
      );
      await chat().loadThread(CONVERSATION_ID);
      chat().onConversationOpened({ conversationId: CONVERSATION_ID, streaming: false });
      expect(chat().threads[CONVERSATION_ID]!.staleStream).toBe(false);
      await vi.advanceTimersByTimeAsync(STALE_RECHECK_MS + 10);
      expect(chat().threads[CONVERSATION_ID]!.staleStream).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a reconnect', () => {
  it('forgets stream positions, reloads the shown conversation and settles sends in flight', async () => {
    let stored = false;
    route((method, path) => {
      if (path.startsWith('/conversations?')) return jsonResponse(200, { success: true, data: [conversation()], nextCursor: null });
      if (method === 'GET' && path === `/conversations/${CONVERSATION_ID}`) {
        const messages = stored ? [userMessage({ clientId: 'kept' })] : [];
        return jsonResponse(200, { success: true, data: { ...conversation(), messages } });
      }
      return undefined;
    });
    await chat().loadConversations();
    await chat().loadThread(CONVERSATION_ID);
    chat().setShown(CONVERSATION_ID);
    const lost = chat().send({ conversationId: CONVERSATION_ID, content: 'lost one', model: null, webSearch: false })!;
    const fresh = chat().send({ conversationId: null, content: 'new one', model: null, webSearch: false })!;

    chat().onReady();
    await vi.waitFor(() => expect(chat().pending).toEqual({}));
    expect(chat().drafts[CONVERSATION_ID]).toBe('lost one');
    expect(chat().errors[CONVERSATION_ID]).toEqual({ code: 'not_sent', resend: true });
    expect(chat().drafts[NEW_CHAT]).toBe('new one');
    expect(chat().errors[NEW_CHAT]).toEqual({ code: 'maybe_not_sent', resend: true });
    expect(lost).not.toBe(fresh);

    // A send the server did store just shows up.
    stored = true;
    useChatStore.setState({ drafts: {}, errors: {} });
    useChatStore.setState((state) => ({
      pending: { kept: { clientId: 'kept', conversationId: CONVERSATION_ID, content: 'x', attachments: [], parentId: null, createdAt: '' } },
      threads: state.threads,
    }));
    chat().onReady();
    await vi.waitFor(() => expect(chat().pending).toEqual({}));
    expect(chat().errors[CONVERSATION_ID]).toBeUndefined();
    expect(chat().threads[CONVERSATION_ID]!.messages.map((m) => m.clientId)).toEqual(['kept']);
  });
});

describe('the list', () => {
  it('loads pages by cursor', async () => {
    const first = [conversation({ _id: 'b', updatedAt: '2025-03-14T10:00:02Z' })];
    const second = [conversation({ _id: 'a', updatedAt: '2025-03-14T10:00:01Z' })];
    route((_method, path) => {
      if (path === '/conversations?limit=20') return jsonResponse(200, { success: true, data: first, nextCursor: 'k' });
      if (path === '/conversations?limit=20&cursor=k') return jsonResponse(200, { success: true, data: second, nextCursor: null });
      return undefined;
    });
    await chat().loadConversations();
    expect(chat().list).toEqual({ items: first, nextCursor: 'k' });
    await chat().loadMoreConversations();
    expect(chat().list.items.map((c) => c._id)).toEqual(['b', 'a']);
    expect(chat().list.nextCursor).toBeNull();
  });

  it('renames and deletes through the API', async () => {
    const renamed = conversation({ title: 'Python notes', updatedAt: '2025-03-14T11:00:00Z' });
    route((method, path) => {
      if (method === 'PATCH' && path === `/conversations/${CONVERSATION_ID}`) return jsonResponse(200, { success: true, data: renamed });
      if (method === 'DELETE' && path === `/conversations/${CONVERSATION_ID}`) return jsonResponse(200, { success: true });
      return undefined;
    });
    chat().onConversationCreated({ clientId: 'x', conversation: conversation() });
    await chat().rename(CONVERSATION_ID, 'Python notes');
    expect(JSON.parse(fetchMock.mock.calls[0]![1]!.body as string)).toEqual({ title: 'Python notes' });
    expect(chat().list.items[0]!.title).toBe('Python notes');
    await chat().remove(CONVERSATION_ID);
    expect(chat().list.items).toEqual([]);
    expect(chat().deletedHere[CONVERSATION_ID]).toBe(true);
  });
});

describe('pinned and archived', () => {
  const older = () => conversation({ _id: 'older', updatedAt: '2025-03-14T09:00:00Z' });
  const ids = () => chat().list.items.map((c) => c._id);

  it('pins through PATCH and moves the row on top, and a frame from another tab does the same', async () => {
    route((method, path) => {
      if (method === 'PATCH' && path === '/conversations/older') return jsonResponse(200, { success: true, data: { ...older(), pinned: true } });
      return undefined;
    });
    chat().onConversationCreated({ clientId: 'x', conversation: older() });
    chat().onConversationCreated({ clientId: 'y', conversation: conversation() });
    expect(ids()).toEqual([CONVERSATION_ID, 'older']);
    await chat().update('older', { pinned: true });
    expect(JSON.parse(fetchMock.mock.calls[0]![1]!.body as string)).toEqual({ pinned: true });
    expect(ids()).toEqual(['older', CONVERSATION_ID]);
    // Another tab unpins it: conversation.updated with the new flag.
    chat().onConversationUpdated({ conversation: { ...older(), pinned: false } });
    expect(ids()).toEqual([CONVERSATION_ID, 'older']);
  });

  it('an archived conversation leaves the main list and joins a loaded archived view; unarchived, it comes back', async () => {
    route((_method, path) => {
      if (path === '/conversations?limit=20&archived=true') {
        return jsonResponse(200, { success: true, data: [conversation({ _id: 'old', archived: true, updatedAt: '2025-03-01T09:00:00Z' })], nextCursor: null });
      }
      return undefined;
    });
    chat().onConversationCreated({ clientId: 'x', conversation: conversation() });
    await chat().loadArchived();
    expect(chat().archived.items.map((c) => c._id)).toEqual(['old']);
    chat().onConversationUpdated({ conversation: conversation({ archived: true }) });
    expect(ids()).toEqual([]);
    expect(chat().archived.items.map((c) => c._id)).toEqual([CONVERSATION_ID, 'old']);
    chat().onConversationUpdated({ conversation: conversation({ archived: false }) });
    expect(ids()).toEqual([CONVERSATION_ID]);
    expect(chat().archived.items.map((c) => c._id)).toEqual(['old']);
    // Deleted from the archived view: gone from it.
    chat().onConversationDeleted({ conversationId: 'old' });
    expect(chat().archived.items).toEqual([]);
  });

  it('a first page fetched while a conversation was archived does not bring it back', async () => {
    let answer: (value: Response) => void = () => undefined;
    fetchMock.mockImplementation(() => new Promise((resolve) => (answer = resolve)));
    const loading = chat().loadConversations();
    chat().onConversationUpdated({ conversation: conversation({ archived: true }) });
    answer(jsonResponse(200, { success: true, data: [conversation(), older()], nextCursor: null }));
    await loading;
    expect(ids()).toEqual(['older']);
  });

  it('a message in an archived conversation the list lacks does not list it', async () => {
    route((_method, path) => {
      if (path === '/conversations?limit=20') return jsonResponse(200, { success: true, data: [], nextCursor: null });
      if (path === `/conversations/${CONVERSATION_ID}`) {
        return jsonResponse(200, { success: true, data: { ...conversation({ archived: true }), messages: [] } });
      }
      return undefined;
    });
    await chat().loadConversations();
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId: null, message: userMessage() });
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(2));
    await Promise.resolve();
    expect(ids()).toEqual([]);
  });

  it('a search hit is remembered for its conversation, a new choice with a new number', () => {
    chat().showFound(CONVERSATION_ID, 'm1');
    const first = chat().found!;
    expect(first).toMatchObject({ conversationId: CONVERSATION_ID, messageId: 'm1' });
    chat().showFound(CONVERSATION_ID, 'm1');
    expect(chat().found!.seq).toBeGreaterThan(first.seq);
    chat().clearFound();
    expect(chat().found).toBeNull();
  });
});

describe('deep search', () => {
  it('is sent as a web search with deepSearch, and is off again for the next send (web search stays on)', () => {
    chat().setOptions(NEW_CHAT, { webSearch: true, deepSearch: true });
    const clientId = chat().send({ conversationId: null, content: 'Report on lighthouses', model: null, webSearch: false, deepSearch: true })!;
    expect(emit).toHaveBeenCalledWith('chat.send', sendFrame({
      clientId,
      conversationId: null,
      content: 'Report on lighthouses',
      webSearch: true,
      deepSearch: true,
    }));
    expect(chat().options[NEW_CHAT]).toMatchObject({ webSearch: true, deepSearch: false });
  });

  it('is off in a send without it', () => {
    const clientId = chat().send({ conversationId: null, content: 'Hi', model: null, webSearch: true })!;
    expect(emit).toHaveBeenCalledWith('chat.send', sendFrame({ clientId, conversationId: null, content: 'Hi', webSearch: true }));
  });

  it('comes back on with the text when the send is refused (not enough searches left)', () => {
    chat().setDraft(NEW_CHAT, 'Report');
    chat().setOptions(NEW_CHAT, { deepSearch: true, webSearch: true });
    const clientId = chat().send({ conversationId: null, content: 'Report', model: null, webSearch: true, deepSearch: true })!;
    chat().onError({
      clientId,
      code: 'deep_search_limit',
      message: 'A deep search needs 6 web searches, and fewer are left in your limit',
    });
    expect(chat().drafts[NEW_CHAT]).toBe('Report');
    expect(chat().options[NEW_CHAT]).toMatchObject({ webSearch: true, deepSearch: true });
    expect(chat().errors[NEW_CHAT]?.code).toBe('deep_search_limit');
  });
});

describe('image generation', () => {
  it('is sent alone (no web or deep search), remembered for its answer, and off again for the next send', () => {
    chat().setOptions(NEW_CHAT, { imageGeneration: true });
    const clientId = chat().send({
      conversationId: null,
      content: 'A red fox in the snow',
      model: 'gpt-4o-mini',
      webSearch: false,
      imageGeneration: true,
    })!;
    expect(emit).toHaveBeenCalledWith('chat.send', sendFrame({
      clientId,
      conversationId: null,
      content: 'A red fox in the snow',
      model: 'gpt-4o-mini',
      imageGeneration: true,
    }));
    expect(chat().options[NEW_CHAT]).toMatchObject({ imageGeneration: false });
    expect(chat().imageSends[clientId]).toBe(true);
  });

  it('never goes with a web search, even if one was asked (the server refuses both)', () => {
    const clientId = chat().send({
      conversationId: null,
      content: 'A fox',
      model: null,
      webSearch: true,
      deepSearch: true,
      imageGeneration: true,
    })!;
    expect(emit).toHaveBeenCalledWith('chat.send', sendFrame({ clientId, conversationId: null, content: 'A fox', imageGeneration: true }));
  });

  it('is off in a send without it', () => {
    const clientId = chat().send({ conversationId: null, content: 'Hi', model: null, webSearch: false })!;
    expect(emit).toHaveBeenCalledWith('chat.send', sendFrame({ clientId, conversationId: null, content: 'Hi', webSearch: false }));
    expect(chat().imageSends).toEqual({});
  });

  it('comes back on with the text when the send is refused (limit reached), web and deep search off', () => {
    chat().setDraft(NEW_CHAT, 'A red fox');
    chat().setOptions(NEW_CHAT, { imageGeneration: true });
    const clientId = chat().send({ conversationId: null, content: 'A red fox', model: null, webSearch: false, imageGeneration: true })!;
    chat().onError({
      clientId,
      code: 'image_limit_reached',
      message: 'You have reached your image generation limit. Upgrade your plan to continue.',
    });
    expect(chat().drafts[NEW_CHAT]).toBe('A red fox');
    expect(chat().options[NEW_CHAT]).toMatchObject({ imageGeneration: true, webSearch: false, deepSearch: false });
    expect(chat().errors[NEW_CHAT]?.code).toBe('image_limit_reached');
    expect(chat().imageSends[clientId]).toBeUndefined();
  });

  it('shows a refused prompt (after the answer ended) in its conversation, the answer ended as an error', () => {
    const clientId = chat().send({ conversationId: null, content: 'Something', model: null, webSearch: false, imageGeneration: true })!;
    chat().onConversationCreated({ clientId, conversation: conversation() });
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: userMessage({ clientId }) });
    chat().onMessageCreated({
      conversationId: CONVERSATION_ID,
      clientId,
      message: answer({ clientId, model: 'gpt-image-1' }),
    });
    chat().onMessageCompleted({
      conversationId: CONVERSATION_ID,
      message: answer({ clientId, model: 'gpt-image-1', status: 'error' }),
      finishReason: 'error',
    });
    const message = 'The image could not be made: the request was refused. Try describing it differently.';
    chat().onError({ clientId, code: 'image_refused', message });
    expect(chat().errors[CONVERSATION_ID]).toEqual({ code: 'image_refused', message });
    expect(chat().threads[CONVERSATION_ID]?.messages.at(-1)).toMatchObject({ status: 'error', final: true });
  });

  it('keeps the answer’s image from message.completed', () => {
    const clientId = chat().send({ conversationId: null, content: 'A red fox', model: null, webSearch: false, imageGeneration: true })!;
    chat().onConversationCreated({ clientId, conversation: conversation() });
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: answer({ clientId, model: 'gpt-image-1' }) });
    const image = storedFile({ _id: 'img1', name: 'a-red-fox.jpg', mime: 'image/jpeg', width: 256, height: 256 });
    chat().onMessageCompleted({
      conversationId: CONVERSATION_ID,
      message: answer({ clientId, model: 'gpt-image-1', status: 'complete', content: 'Here is the image: *A red fox*', attachments: [image] }),
      finishReason: 'stop',
    });
    expect(chat().threads[CONVERSATION_ID]?.messages.at(-1)?.attachments).toEqual([image]);
  });

  it('remembers only the latest few image sends', () => {
    const ids = Array.from({ length: 25 }, (_, i) =>
      chat().send({ conversationId: null, content: `Image ${i}`, model: null, webSearch: false, imageGeneration: true })!,
    );
    expect(Object.keys(chat().imageSends)).toEqual(ids.slice(-20));
  });
});

describe('search progress (search.progress)', () => {
  const frame = (overrides: Partial<ServerFrames['search.progress']> = {}): ServerFrames['search.progress'] => ({
    conversationId: CONVERSATION_ID,
    messageId: ANSWER_ID,
    stage: 'searching',
    queries: ['keeper code'],
    round: 1,
    rounds: 1,
    deep: false,
    ...overrides,
  });

  /** This tab sent the question and knows the answer. */
  function answerStreaming(): string {
    const clientId = sendFromNewChat('What is the keeper’s code?');
    chat().onConversationCreated({ clientId, conversation: conversation() });
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: userMessage({ clientId }) });
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: answer({ clientId }) });
    return clientId;
  }

  it('keeps the steps of an answer by its id, until the answer completes', () => {
    const clientId = answerStreaming();
    chat().onSearchProgress(frame());
    chat().onSearchProgress(frame({ stage: 'reading', queries: undefined, pages: 3 }));
    expect(chat().progress[ANSWER_ID]).toEqual({
      conversationId: CONVERSATION_ID,
      deep: false,
      steps: [
        { stage: 'searching', queries: ['keeper code'], pages: null, round: 1, rounds: 1 },
        { stage: 'reading', queries: [], pages: 3, round: 1, rounds: 1 },
      ],
    });
    // The same stage again within its round updates it.
    chat().onSearchProgress(frame({ stage: 'reading', queries: undefined, pages: 4 }));
    expect(chat().progress[ANSWER_ID]!.steps.map((s) => s.pages)).toEqual([null, 4]);

    chat().onMessageCompleted({
      conversationId: CONVERSATION_ID,
      message: answer({ clientId, status: 'complete', content: 'LIGHTHOUSE-77 [1]' }),
      finishReason: 'stop',
    });
    expect(chat().progress).toEqual({});
    // A late frame for the ended answer changes nothing.
    chat().onSearchProgress(frame({ stage: 'writing' }));
    expect(chat().progress).toEqual({});
  });

  it('keeps a frame for an answer this tab does not know yet (another instance was faster)', () => {
    chat().onSearchProgress(frame({ conversationId: 'elsewhere', messageId: 'not-yet-created', deep: true }));
    expect(chat().progress['not-yet-created']).toMatchObject({ conversationId: 'elsewhere', deep: true });
    expect(chat().threads.elsewhere).toBeUndefined();
    chat().onMessageCompleted({
      conversationId: 'elsewhere',
      message: answer({ _id: 'not-yet-created', conversationId: 'elsewhere', status: 'complete' }),
      finishReason: 'stop',
    });
    expect(chat().progress).toEqual({});
  });

  it('is dropped when the answer fails without an end, or its conversation is deleted', () => {
    const clientId = answerStreaming();
    chat().onSearchProgress(frame());
    chat().onError({ clientId, code: 'search_unavailable', message: 'Web search is not set up on this server' });
    expect(chat().progress).toEqual({});
    expect(chat().errors[CONVERSATION_ID]?.code).toBe('search_unavailable');

    chat().onSearchProgress(frame({ messageId: 'another' }));
    chat().onConversationDeleted({ conversationId: CONVERSATION_ID });
    expect(chat().progress).toEqual({});
  });

  it('forgets the oldest answers beyond a few, whose end this tab may never hear of', () => {
    for (let i = 0; i < MAX_PROGRESS_ENTRIES + 5; i += 1) chat().onSearchProgress(frame({ messageId: `m${i}` }));
    const ids = Object.keys(chat().progress);
    expect(ids).toHaveLength(MAX_PROGRESS_ENTRIES);
    expect(ids[0]).toBe('m5');
    expect(ids.at(-1)).toBe(`m${MAX_PROGRESS_ENTRIES + 4}`);
  });

  it('is emptied with the rest when the user changes', () => {
    chat().onSearchProgress(frame());
    chat().reset();
    expect(chat().progress).toEqual({});
  });
});

describe('versions', () => {
  // q1 → a1, then q1 edited into q1b → a1b.
  const at = (n: number) => `2025-03-14T10:20:${String(n).padStart(2, '0')}.000+00:00`;
  const q1 = userMessage({ _id: 'q1', clientId: 'c1', parentId: null, createdAt: at(1) });
  const a1 = answer({ _id: 'a1', clientId: 'c1', parentId: 'q1', createdAt: at(2), status: 'complete', content: 'A1' });
  const q1b = userMessage({ _id: 'q1b', clientId: 'c2', parentId: null, createdAt: at(3), content: 'Edited' });
  const a1b = answer({ _id: 'a1b', clientId: 'c2', parentId: 'q1b', createdAt: at(4), status: 'complete', content: 'A1b' });
  const entry = () => chat().threads[CONVERSATION_ID]!;

  /** The conversation loaded over REST with these messages and current message. */
  async function loaded(messages = [q1, a1, q1b, a1b], currentMessageId: string | null = 'a1b') {
    route((method, path) =>
      method === 'GET' && path === `/conversations/${CONVERSATION_ID}`
        ? jsonResponse(200, { success: true, data: { ...conversation({ currentMessageId }), messages } })
        : undefined,
    );
    await chat().loadThread(CONVERSATION_ID);
  }

  it('keeps every branch and the current message from REST', async () => {
    await loaded();
    expect(entry().messages.map((m) => m._id)).toEqual(['q1', 'a1', 'q1b', 'a1b']);
    expect(entry().currentId).toBe('a1b');
  });

  it('makes a new answer current (message.created), in this tab as in any', async () => {
    await loaded([q1, a1], 'a1');
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId: 'other', message: answer({ _id: 'a1r', clientId: 'other', parentId: 'q1', createdAt: at(5) }) });
    expect(entry().currentId).toBe('a1r');
  });

  it('follows conversation.updated (a version picked in another tab)', async () => {
    await loaded();
    chat().onConversationUpdated({ conversation: conversation({ currentMessageId: 'a1' }) });
    expect(entry().currentId).toBe('a1');
  });

  it('keeps a current message a frame moved while REST was loading', async () => {
    await loaded([q1, a1], 'a1');
    let answerRest: ((r: Response) => void) | undefined;
    fetchMock.mockImplementation(() => new Promise<Response>((ok) => (answerRest = ok)));
    const load = chat().loadThread(CONVERSATION_ID);
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId: 'other', message: answer({ _id: 'a1r', clientId: 'other', parentId: 'q1', createdAt: at(5) }) });
    answerRest!(jsonResponse(200, { success: true, data: { ...conversation({ currentMessageId: 'a1' }), messages: [q1, a1] } }));
    await load;
    expect(entry().currentId).toBe('a1r');
  });

  it('switches versions at once and tells the server (conversation.select)', async () => {
    await loaded();
    expect(chat().selectVersion(CONVERSATION_ID, 'q1')).toBe(true);
    expect(emit).toHaveBeenCalledWith('conversation.select', { conversationId: CONVERSATION_ID, messageId: 'q1' });
    // The newest message below the version picked: its answer.
    expect(entry().currentId).toBe('a1');
  });

  it('says so and stays when the socket is down', async () => {
    await loaded();
    emit.mockReturnValue(false);
    expect(chat().selectVersion(CONVERSATION_ID, 'q1')).toBe(false);
    expect(entry().currentId).toBe('a1b');
    expect(chat().errors[CONVERSATION_ID]).toEqual({ code: 'offline' });
  });

  it('attaches a send’s pending question under the current message', async () => {
    await loaded();
    const clientId = chat().send({ conversationId: CONVERSATION_ID, content: 'More', model: null, webSearch: false })!;
    expect(chat().pending[clientId]).toMatchObject({ parentId: 'a1b' });
    expect(emit).toHaveBeenCalledWith('chat.send', sendFrame({ clientId, conversationId: CONVERSATION_ID, content: 'More', editOf: null }));
  });

  it('sends an edit beside the question it replaces, keeping the composer’s draft', async () => {
    await loaded([q1, a1], 'a1');
    chat().setDraft(CONVERSATION_ID, 'half-written');
    chat().setEdit('q1', 'Hello again');
    const clientId = chat().send({ conversationId: CONVERSATION_ID, content: 'Hello again', model: 'gpt-4o-mini', webSearch: true, editOf: 'q1' })!;
    expect(emit).toHaveBeenCalledWith(
      'chat.send',
      sendFrame({ clientId, conversationId: CONVERSATION_ID, content: 'Hello again', model: 'gpt-4o-mini', webSearch: true, editOf: 'q1' }),
    );
    expect(chat().pending[clientId]).toMatchObject({ parentId: null, editOf: 'q1' });
    expect(chat().drafts[CONVERSATION_ID]).toBe('half-written');
    expect(chat().edits.q1).toBeUndefined();

    // The server's question, then its answer: the new branch is current.
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: userMessage({ _id: 'q1e', clientId, parentId: null, createdAt: at(5) }) });
    expect(chat().pending[clientId]).toBeUndefined();
    expect(entry().currentId).toBe('q1e');
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId, message: answer({ _id: 'a1e', clientId, parentId: 'q1e', createdAt: at(6) }) });
    expect(entry().currentId).toBe('a1e');
  });

  it('opens a refused edit’s box again with its text (the composer’s draft stays)', async () => {
    await loaded([q1, a1], 'a1');
    const clientId = chat().send({ conversationId: CONVERSATION_ID, content: 'Edited text', model: null, webSearch: false, editOf: 'q1' })!;
    chat().onError({ clientId, code: 'generation_in_progress', message: 'An answer is still being written' });
    expect(chat().edits.q1).toBe('Edited text');
    expect(chat().drafts[CONVERSATION_ID]).toBeUndefined();
    expect(chat().errors[CONVERSATION_ID]?.code).toBe('generation_in_progress');
  });

  it('regenerates an answer, and shows a refusal in its conversation', async () => {
    await loaded([q1, a1], 'a1');
    const clientId = chat().regenerate(CONVERSATION_ID, 'a1', 'gpt-4.1-mini')!;
    expect(emit).toHaveBeenCalledWith('chat.regenerate', { clientId, conversationId: CONVERSATION_ID, messageId: 'a1', model: 'gpt-4.1-mini' });
    expect(chat().regenerating[clientId]).toEqual({ conversationId: CONVERSATION_ID, messageId: 'a1' });
    chat().onError({ clientId, code: 'limit_reached', message: 'You have reached your daily message limit.', field: 'day' });
    expect(chat().regenerating).toEqual({});
    expect(chat().errors[CONVERSATION_ID]?.code).toBe('limit_reached');

    const again = chat().regenerate(CONVERSATION_ID, 'a1', null)!;
    expect(emit).toHaveBeenLastCalledWith('chat.regenerate', { clientId: again, conversationId: CONVERSATION_ID, messageId: 'a1', model: null });
    expect(chat().errors[CONVERSATION_ID]).toBeUndefined();
    chat().onMessageCreated({ conversationId: CONVERSATION_ID, clientId: again, message: answer({ _id: 'a1r', clientId: again, parentId: 'q1', createdAt: at(5) }) });
    expect(chat().regenerating).toEqual({});
    expect(entry().currentId).toBe('a1r');
  });

  it('rates an answer at once, takes the server’s answer, and puts the old rating back on failure', async () => {
    await loaded([q1, a1], 'a1');
    const bodies: unknown[] = [];
    let fail = false;
    fetchMock.mockImplementation((input, init) => {
      const path = urlOf(input).replace(/^\/api/, '');
      if (init?.method !== 'PUT' || path !== '/messages/a1/feedback') return Promise.resolve(jsonResponse(404, {}));
      bodies.push(JSON.parse(init.body as string));
      if (fail) return Promise.resolve(jsonResponse(400, { success: false, code: 'field_too_long', message: 'Comment is too long' }));
      return Promise.resolve(jsonResponse(200, { success: true, data: { rating: 'down', comment: 'Too short' } }));
    });
    const rated = chat().rateAnswer(CONVERSATION_ID, 'a1', 'down', ' Too short ');
    expect(entry().messages[1]!.feedback).toEqual({ rating: 'down', comment: 'Too short' });
    await rated;
    expect(bodies).toEqual([{ rating: 'down', comment: 'Too short' }]);

    fail = true;
    await expect(chat().rateAnswer(CONVERSATION_ID, 'a1', null)).rejects.toMatchObject({ code: 'field_too_long' });
    expect(bodies[1]).toEqual({ rating: null });
    expect(entry().messages[1]!.feedback).toEqual({ rating: 'down', comment: 'Too short' });
  });

  it('shows a rating given in another tab (message.feedback)', async () => {
    await loaded([q1, a1], 'a1');
    chat().onMessageFeedback({ conversationId: CONVERSATION_ID, messageId: 'a1', feedback: { rating: 'up', comment: null } });
    expect(entry().messages[1]!.feedback).toEqual({ rating: 'up', comment: null });
    chat().onMessageFeedback({ conversationId: CONVERSATION_ID, messageId: 'a1', feedback: null });
    expect(entry().messages[1]!.feedback).toBeNull();
  });
});

describe('ratings in quick succession', () => {
  it('show what the latest one settled, whatever order the answers and frames come in', async () => {
    const q1 = userMessage({ _id: 'q1', parentId: null });
    const a1 = answer({ _id: 'a1', parentId: 'q1', status: 'complete', content: 'A1', createdAt: '2025-03-14T10:20:00.000+00:00' });
    route((method, path) =>
      method === 'GET' && path === `/conversations/${CONVERSATION_ID}`
        ? jsonResponse(200, { success: true, data: { ...conversation({ currentMessageId: 'a1' }), messages: [q1, a1] } })
        : undefined,
    );
    await chat().loadThread(CONVERSATION_ID);
    const answers: ((r: Response) => void)[] = [];
    fetchMock.mockImplementation(() => new Promise<Response>((ok) => answers.push(ok)));
    const feedbackOf = () => chat().threads[CONVERSATION_ID]!.messages[1]!.feedback;

    const first = chat().rateAnswer(CONVERSATION_ID, 'a1', 'up');
    const second = chat().rateAnswer(CONVERSATION_ID, 'a1', null);
    expect(feedbackOf()).toBeNull();
    // The first one's frame, then the second's answer, then the first's answer.
    chat().onMessageFeedback({ conversationId: CONVERSATION_ID, messageId: 'a1', feedback: { rating: 'up', comment: null } });
    expect(feedbackOf()).toBeNull();
    answers[1]!(jsonResponse(200, { success: true, data: null }));
    await second;
    answers[0]!(jsonResponse(200, { success: true, data: { rating: 'up', comment: null } }));
    await first;
    expect(feedbackOf()).toBeNull();
    // Once settled, another tab's rating shows again.
    chat().onMessageFeedback({ conversationId: CONVERSATION_ID, messageId: 'a1', feedback: { rating: 'down', comment: null } });
    expect(feedbackOf()).toEqual({ rating: 'down', comment: null });
  });
});
