import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSocketRouter } from '@/app/socket-router';
import { useLocalSettingsStore } from '@/features/settings';
import { i18n } from '@/lib/i18n';
import { setNavigate } from '@/lib/navigation';
import { chatSocket } from '@/lib/socket';
import type { Conversation, FinishReason, Message } from '@/types/generated';
import {
  answerNotification,
  createClaimCoordinator,
  plainText,
  setConversationTitleLookup,
  startAnswerNotifications,
  wantsNotification,
} from './answer-notifications';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function frame(type: string, payload: unknown) {
  (chatSocket as unknown as { dispatch(t: string, p: unknown): void }).dispatch(type, payload);
}

function answer(content: string, id = 'm1'): Message {
  return {
    _id: id,
    conversationId: 'c1',
    role: 'assistant',
    content,
    status: 'complete',
    model: 'demo',
    clientId: null,
    createdAt: '2025-03-14T10:00:00Z',
    attachments: [],
    sources: [],
    parentId: null,
    feedback: null,
  };
}

function conversation(title: string | null): Conversation {
  return { _id: 'c1', title, model: 'demo', webSearch: false, createdAt: '2025-03-14T10:00:00Z', updatedAt: '2025-03-14T10:00:00Z', projectId: null, currentMessageId: null, pinned: false, archived: false };
}

let visibility: DocumentVisibilityState;
let shown: { title: string; options: NotificationOptions; instance: { onclick: (() => void) | null; close: () => void } }[];

function stubNotification(permission: NotificationPermission) {
  shown = [];
  const Fake = vi.fn(function (this: { onclick: (() => void) | null; close: () => void }, title: string, options: NotificationOptions) {
    this.onclick = null;
    this.close = vi.fn();
    shown.push({ title, options, instance: this });
  });
  vi.stubGlobal('Notification', Object.assign(Fake, { permission }));
}

beforeEach(async () => {
  // The frames reach the notifier through the app's router (as at start-up).
  startSocketRouter();
  visibility = 'hidden';
  vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
  stubNotification('granted');
  useLocalSettingsStore.setState({ notifications: true });
  setConversationTitleLookup(() => undefined);
  await i18n.changeLanguage('en-US');
});

describe('plainText', () => {
  it('strips Markdown roughly: headings, emphasis, code marks, links as their text', () => {
    expect(plainText('# The report\n\nSee **bold**, *it*, `code` and [the page](https://example.org).')).toBe(
      'The report See bold, it, code and the page.',
    );
    expect(plainText('- one\n- two\n> quoted\n```js\nlet x = 1;\n```')).toBe('one two quoted let x = 1;');
  });

  it('keeps about 120 characters', () => {
    const text = plainText('word '.repeat(100));
    expect(text.length).toBeLessThanOrEqual(120);
    expect(text.endsWith('…')).toBe(true);
  });
});

describe('wantsNotification', () => {
  const base = { finishReason: 'stop' as const, enabled: true, permission: 'granted' as const, visible: false };
  it('only for a finished answer in a hidden tab, with the setting on and the permission granted', () => {
    expect(wantsNotification(base)).toBe(true);
    expect(wantsNotification({ ...base, visible: true })).toBe(false);
    expect(wantsNotification({ ...base, enabled: false })).toBe(false);
    expect(wantsNotification({ ...base, permission: 'default' })).toBe(false);
    expect(wantsNotification({ ...base, permission: 'denied' })).toBe(false);
    expect(wantsNotification({ ...base, permission: 'unsupported' })).toBe(false);
    expect(wantsNotification({ ...base, finishReason: 'cancelled' })).toBe(false);
    expect(wantsNotification({ ...base, finishReason: 'error' })).toBe(false);
  });
});

describe('answerNotification', () => {
  it('has the title, the start of the answer and the conversation as its tag', () => {
    expect(answerNotification('c1', 'Lighthouses', '**Yes**, it is.')).toMatchObject({
      title: 'Lighthouses',
      options: { body: 'Yes, it is.', tag: 'c1' },
    });
  });

  it('says "New answer" without a title, in English and Hungarian', async () => {
    expect(answerNotification('c1', null, 'Hi').title).toBe('New answer');
    expect(answerNotification('c1', '  ', 'Hi').title).toBe('New answer');
    await i18n.changeLanguage('hu-HU');
    expect(answerNotification('c1', null, 'Szia').title).toBe('Új válasz');
    expect(answerNotification('c1', 'Világítótornyok', 'Szia').title).toBe('Világítótornyok');
  });
});

describe('one tab notifies', () => {
  const channels: BroadcastChannel[] = [];
  const coordinator = (tabId: string, name: string) => {
    const channel = new BroadcastChannel(name);
    channels.push(channel);
    return createClaimCoordinator({ tabId, wait: 40, channel });
  };
  afterEach(() => {
    for (const channel of channels.splice(0)) channel.close();
  });

  it('the hidden tab with the smallest id wins; the others stay quiet', async () => {
    const [a, b, c] = [coordinator('a', 'test-1'), coordinator('b', 'test-1'), coordinator('c', 'test-1')];
    const results = await Promise.all([c.claim('m1', () => false), a.claim('m1', () => false), b.claim('m1', () => false)]);
    expect(results).toEqual([false, true, false]);
  });

  it('nobody notifies when a tab is visible', async () => {
    const [a, b] = [coordinator('a', 'test-2'), coordinator('b', 'test-2')];
    const results = await Promise.all([a.claim('m1', () => false), b.claim('m1', () => true)]);
    expect(results).toEqual([false, false]);
  });

  it('a tab whose frame comes late does not notify again', async () => {
    const [a, z] = [coordinator('z', 'test-3'), coordinator('a', 'test-3')];
    expect(await a.claim('m1', () => false)).toBe(true);
    expect(await z.claim('m1', () => false)).toBe(false);
  });

  it('a lone tab notifies, each answer once', async () => {
    const a = coordinator('a', 'test-4');
    expect(await a.claim('m1', () => false)).toBe(true);
    expect(await a.claim('m2', () => false)).toBe(true);
  });
});

describe('startAnswerNotifications', () => {
  let stop: () => void;
  beforeEach(() => {
    stop = startAnswerNotifications();
  });
  afterEach(() => stop());

  const complete = (content: string, finishReason: FinishReason = 'stop', id = 'm1') =>
    frame('message.completed', { conversationId: 'c1', message: answer(content, id), finishReason });

  it('shows the conversation title and the answer, tagged with the conversation; a click opens it', async () => {
    const navigate = vi.fn();
    setNavigate(navigate);
    const focus = vi.spyOn(window, 'focus').mockImplementation(() => undefined);
    setConversationTitleLookup((id) => (id === 'c1' ? 'Lighthouses' : undefined));
    complete('## The keeper\n\nThe code is **LIGHTHOUSE-77**.');
    await sleep(350);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({
      title: 'Lighthouses',
      options: { body: 'The keeper The code is LIGHTHOUSE-77.', tag: 'c1' },
    });
    shown[0]!.instance.onclick?.();
    expect(focus).toHaveBeenCalled();
    expect(navigate).toHaveBeenCalledWith('/chat/c1');
    expect(shown[0]!.instance.close).toHaveBeenCalled();
  });

  it('uses a title from the frames, else "New answer" (Új válasz)', async () => {
    complete('Hi');
    await sleep(350);
    expect(shown.map((n) => n.title)).toEqual(['New answer']);
    frame('conversation.updated', { conversation: conversation('Greetings') });
    complete('Hi again', 'stop', 'm2');
    await sleep(350);
    expect(shown.map((n) => n.title)).toEqual(['New answer', 'Greetings']);
    await i18n.changeLanguage('hu-HU');
    frame('conversation.updated', { conversation: conversation(null) });
    complete('Szia', 'stop', 'm3');
    await sleep(350);
    expect(shown.at(-1)?.title).toBe('Új válasz');
  });

  it('stays quiet when visible, with the setting off, without permission or for an unfinished answer', async () => {
    visibility = 'visible';
    complete('a', 'stop', 'v1');
    visibility = 'hidden';
    useLocalSettingsStore.setState({ notifications: false });
    complete('b', 'stop', 'v2');
    useLocalSettingsStore.setState({ notifications: true });
    complete('c', 'cancelled', 'v3');
    complete('d', 'error', 'v4');
    await sleep(350);
    stubNotification('default');
    complete('e', 'stop', 'v5');
    await sleep(350);
    expect(shown).toHaveLength(0);
  });

  it('does not notify when the tab became visible while waiting', async () => {
    complete('a', 'stop', 'w1');
    visibility = 'visible';
    await sleep(350);
    expect(shown).toHaveLength(0);
  });
});
