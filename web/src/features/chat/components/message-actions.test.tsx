import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useSubscriptionStore } from '@/features/subscription';
import { i18n } from '@/lib/i18n';
import { chatSocket } from '@/lib/socket';
import { jsonResponse } from '@/test/fixtures';
import { ConversationActionsContext } from '../lib/conversation-actions';
import { useChatStore } from '../stores/chat';
import { fromServer } from '../stores/thread';
import { answer, basePlan, conversation, CONVERSATION_ID, subscriptionAnswer, userMessage } from '@/test/chat-fixtures';
import { AssistantBubble, UserBubble } from './message-bubble';
import { COPIED_MS } from './message-actions';

const emit = vi.fn<typeof chatSocket.emit>();
const fetchMock = vi.fn<typeof fetch>();
const chat = () => useChatStore.getState();

const q1 = userMessage({ _id: 'q1', parentId: null, content: 'What is **this**?' });
const a1 = answer({ _id: 'a1', parentId: 'q1', status: 'complete', content: 'It is *that*.', model: 'gpt-4o-mini' });

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
  emit.mockReset().mockReturnValue(true);
  vi.spyOn(chatSocket, 'emit').mockImplementation(emit);
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  chat().reset();
  useChatStore.setState({
    threads: {
      [CONVERSATION_ID]: {
        status: 'ready',
        conversation: conversation({ currentMessageId: 'a1' }),
        messages: [fromServer(q1, false), fromServer(a1, false)],
        currentId: 'a1',
        lastActivity: 0,
        staleStream: false,
      },
    },
  });
  useSubscriptionStore.getState().reset();
  useSubscriptionStore.getState().applySubscription(subscriptionAnswer(basePlan));
});

afterEach(() => {
  vi.useRealTimers();
});

const place = { conversationId: CONVERSATION_ID, depth: 0 };

/** A click, then the PUT it made and its answer. */
async function clickAndSettle(element: HTMLElement) {
  fireEvent.click(element);
  await vi.waitFor(() => expect(fetchMock).toHaveBeenCalled());
  await new Promise((resolve) => setTimeout(resolve, 0));
}

describe('a question’s actions', () => {
  it('switch versions: “‹ 2 / 3 ›”, each side a named button sending conversation.select', () => {
    render(
      <UserBubble content={q1.content} messageId="q1" {...place} version={2} versions={3} previousVersion="q0" nextVersion="q2" />,
    );
    const group = screen.getByRole('group', { name: 'Versions: 2 of 3' });
    expect(within(group).getByTestId('version-label').textContent).toBe('2 / 3');
    fireEvent.click(within(group).getByRole('button', { name: 'Previous version' }));
    expect(emit).toHaveBeenCalledWith('conversation.select', { conversationId: CONVERSATION_ID, messageId: 'q0' });
    fireEvent.click(within(group).getByRole('button', { name: 'Next version' }));
    expect(emit).toHaveBeenLastCalledWith('conversation.select', { conversationId: CONVERSATION_ID, messageId: 'q2' });
  });

  it('show no switcher for a message with one version, and none at all on a pending send', () => {
    const { rerender } = render(<UserBubble content="Hi" messageId="q1" {...place} />);
    expect(screen.queryByTestId('version-switcher')).toBeNull();
    expect(screen.getByRole('button', { name: 'Edit message' })).toBeDefined();
    rerender(<UserBubble content="Hi" pending />);
    expect(screen.queryByRole('toolbar')).toBeNull();
  });

  it('edit in place: the text in a box, Escape cancels, an empty text is not sent, Send sends an edit', () => {
    const sendEdit = vi.fn(() => true);
    render(
      <ConversationActionsContext.Provider value={{ conversationId: CONVERSATION_ID, sendEdit }}>
        <UserBubble content={q1.content} messageId="q1" {...place} />
      </ConversationActionsContext.Provider>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Edit message' }));
    const input = screen.getByRole<HTMLTextAreaElement>('textbox', { name: 'Edit your message' });
    expect(input.value).toBe('What is **this**?');
    expect(document.activeElement).toBe(input);

    fireEvent.keyDown(input, { key: 'Escape' });
    expect(screen.queryByTestId('edit-box')).toBeNull();
    expect(screen.getByText('What is **this**?')).toBeDefined();

    fireEvent.click(screen.getByRole('button', { name: 'Edit message' }));
    fireEvent.change(screen.getByTestId('edit-input'), { target: { value: '  ' } });
    const send = screen.getByRole<HTMLButtonElement>('button', { name: 'Send' });
    expect(send.disabled).toBe(true);
    fireEvent.keyDown(screen.getByTestId('edit-input'), { key: 'Enter' });
    expect(sendEdit).not.toHaveBeenCalled();

    fireEvent.change(screen.getByTestId('edit-input'), { target: { value: 'What is that?' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send' }));
    expect(sendEdit).toHaveBeenCalledWith('q1', 'What is that?');
  });

  it('cannot send an edit while the conversation is busy', () => {
    chat().setEdit('q1', 'Changed');
    render(
      <ConversationActionsContext.Provider value={{ conversationId: CONVERSATION_ID, sendEdit: () => true }}>
        <UserBubble content={q1.content} messageId="q1" {...place} busy />
      </ConversationActionsContext.Provider>,
    );
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Send' }).disabled).toBe(true);
  });
});

describe('copy', () => {
  it('copies the Markdown source and says “Copied” for two seconds', async () => {
    vi.useFakeTimers();
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    render(<AssistantBubble message={fromServer(a1, false)} stale={false} {...place} />);
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Copy' }));
      await Promise.resolve();
    });
    expect(writeText).toHaveBeenCalledWith('It is *that*.');
    expect(screen.getByRole('button', { name: 'Copied' })).toBeDefined();
    expect(screen.getByRole('status').textContent).toBe('Copied');
    act(() => {
      vi.advanceTimersByTime(COPIED_MS);
    });
    expect(screen.getByRole('button', { name: 'Copy' })).toBeDefined();
    vi.unstubAllGlobals();
  });
});

describe('an answer’s actions', () => {
  it('are not shown while it is written (unless it has versions to switch)', () => {
    const streaming = fromServer(answer({ _id: 'a1', parentId: 'q1' }), true);
    const { rerender } = render(<AssistantBubble message={streaming} stale={false} {...place} />);
    expect(screen.queryByRole('toolbar')).toBeNull();
    rerender(<AssistantBubble message={streaming} stale={false} {...place} version={2} versions={2} previousVersion="a0" nextVersion={null} />);
    const toolbar = screen.getByRole('toolbar');
    expect(within(toolbar).getByTestId('version-label').textContent).toBe('2 / 2');
    expect(within(toolbar).queryByRole('button', { name: 'Regenerate' })).toBeNull();
  });

  it('regenerate with the plan’s models, the answer’s own first; never while the conversation is busy', () => {
    const { rerender } = render(<AssistantBubble message={fromServer(a1, false)} stale={false} {...place} />);
    fireEvent.click(screen.getByRole('button', { name: 'Regenerate' }));
    const menu = screen.getByRole('menu', { name: 'Regenerate with' });
    expect(within(menu).getAllByRole('menuitem').map((item) => item.textContent)).toEqual([
      'The same model (gpt-4o-mini)',
      'gpt-4.1-mini',
    ]);
    fireEvent.click(within(menu).getByRole('menuitem', { name: 'gpt-4.1-mini' }));
    expect(emit).toHaveBeenCalledWith('chat.regenerate', expect.objectContaining({ conversationId: CONVERSATION_ID, messageId: 'a1', model: 'gpt-4.1-mini' }));
    expect(screen.queryByRole('menu')).toBeNull();

    rerender(<AssistantBubble message={fromServer(a1, false)} stale={false} {...place} busy />);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Regenerate' }).disabled).toBe(true);
  });

  it('the regenerate menu opens upwards, and downwards where the list’s top would cut it off', () => {
    const top = (element: Element) =>
      element.getAttribute('role') === 'menu' ? 40 : element.hasAttribute('data-scroller') ? 100 : 0;
    vi.spyOn(Element.prototype, 'getBoundingClientRect').mockImplementation(function (this: Element) {
      return { top: top(this), bottom: 0, left: 0, right: 0, width: 0, height: 0, x: 0, y: 0, toJSON: () => ({}) };
    });
    render(
      <div data-scroller>
        <AssistantBubble message={fromServer(a1, false)} stale={false} {...place} />
      </div>,
    );
    const button = screen.getByRole('button', { name: 'Regenerate' });
    fireEvent.click(button);
    expect(screen.getByRole('menu').getAttribute('data-placement')).toBe('below-start');
    fireEvent.keyDown(screen.getByRole('menu'), { key: 'Escape' });
    expect(document.activeElement).toBe(button);

    vi.mocked(Element.prototype.getBoundingClientRect).mockRestore();
    fireEvent.click(button);
    expect(screen.getByRole('menu').getAttribute('data-placement')).toBe('above-start');
  });

  it('rate: a thumb is chosen at once and asks for a comment; the same thumb again takes it back', async () => {
    const bodies: unknown[] = [];
    fetchMock.mockImplementation((_input, init) => {
      const body = JSON.parse(init?.body as string) as { rating: string | null; comment?: string };
      bodies.push(body);
      const data = body.rating ? { rating: body.rating, comment: body.comment ?? null } : null;
      return Promise.resolve(jsonResponse(200, { success: true, data }));
    });
    const Bubble = () => {
      const message = useChatStore((s) => s.threads[CONVERSATION_ID]!.messages[1]!);
      return <AssistantBubble message={message} stale={false} {...place} />;
    };
    render(<Bubble />);
    await act(() => clickAndSettle(screen.getByRole('button', { name: 'Bad answer' })));
    expect(screen.getByRole('button', { name: 'Bad answer' }).getAttribute('aria-pressed')).toBe('true');
    expect(screen.getByRole('button', { name: 'Good answer' }).getAttribute('aria-pressed')).toBe('false');
    const box = screen.getByTestId('feedback-comment');
    fireEvent.change(within(box).getByRole('textbox', { name: 'Tell us more (optional)' }), { target: { value: 'Too short' } });
    await act(() => clickAndSettle(within(box).getByRole('button', { name: 'Send' })));
    expect(bodies).toEqual([{ rating: 'down' }, { rating: 'down', comment: 'Too short' }]);
    expect(screen.queryByTestId('feedback-comment')).toBeNull();
    expect(chat().threads[CONVERSATION_ID]!.messages[1]!.feedback).toEqual({ rating: 'down', comment: 'Too short' });

    await act(() => clickAndSettle(screen.getByRole('button', { name: 'Bad answer' })));
    expect(bodies[2]).toEqual({ rating: null });
    expect(screen.getByRole('button', { name: 'Bad answer' }).getAttribute('aria-pressed')).toBe('false');
    expect(screen.queryByTestId('feedback-comment')).toBeNull();
  });

  it('are in Hungarian too', async () => {
    await i18n.changeLanguage('hu-HU');
    render(<AssistantBubble message={fromServer(a1, false)} stale={false} {...place} version={1} versions={2} previousVersion={null} nextVersion="a2" />);
    for (const name of ['Másolás', 'Újragenerálás', 'Jó válasz', 'Rossz válasz', 'Előző változat', 'Következő változat']) {
      expect(screen.getByRole('button', { name })).toBeDefined();
    }
  });
});
