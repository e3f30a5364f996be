/**
 * Browser notifications for finished answers (the local `notifications` setting, SPEC §3).
 *
 * An answer that ends normally (`message.completed` with `finishReason: "stop"`; a deep
 * search's report and a generated image too) is announced when the setting is on, the
 * browser has granted the permission (asked for only from the settings toggle) and no tab
 * of the user is visible. Every tab of the user receives the frame, so the tabs agree on
 * one: each announces the answer on a `BroadcastChannel('chat-notify')` with whether it is
 * visible, waits a moment, and then
 *   - nobody notifies if any tab said it is visible (the user is looking at the app);
 *   - otherwise the hidden tab with the smallest tab id notifies, and says so, so a tab
 *     whose frame came late does not notify again.
 * Without BroadcastChannel each hidden tab notifies; the notification's `tag` (the
 * conversation id) makes the browser replace rather than stack them either way.
 */
import { useLocalSettingsStore } from '@/features/settings';
import { i18n } from '@/lib/i18n';
import { navigateTo } from '@/lib/navigation';
import { randomId } from '@/lib/random-id';
import type { ServerFrames, SliceFrames } from '@/lib/socket-protocol';
import type { FinishReason } from '@/types/generated';
import { useChatStore } from '../stores/chat';

export const NOTIFY_CHANNEL = 'chat-notify';
/** How long a tab waits for its siblings' announcements before deciding. */
export const CLAIM_WAIT_MS = 250;
const BODY_LENGTH = 120;
const FORGET_AFTER_MS = 60_000;

/** Markdown roughly turned into one line of plain text, at most `max` characters. */
export function plainText(markdown: string, max = BODY_LENGTH): string {
  const text = markdown
    .replace(/```[^\n]*\n?/g, ' ') // code fences (their content stays)
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images: their alt text
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1') // links: their text
    .replace(/^\s{0,3}(#{1,6}|>+|[-*+]|\d+[.)])\s+/gm, '') // headings, quotes, list marks
    .replace(/[*_~`#]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length <= max) return text;
  return `${text.slice(0, max - 1).trimEnd()}…`;
}

export type Permission = NotificationPermission | 'unsupported';

export function notificationPermission(): Permission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

export interface NotifyConditions {
  finishReason: FinishReason;
  enabled: boolean;
  permission: Permission;
  visible: boolean;
}

/** Whether this tab may announce the answer at all (before agreeing with the others). */
export function wantsNotification({ finishReason, enabled, permission, visible }: NotifyConditions): boolean {
  return finishReason === 'stop' && enabled && permission === 'granted' && !visible;
}

export interface AnswerNotification {
  title: string;
  options: NotificationOptions;
}

/** The notification's text: the conversation's title (or "New answer") and the answer's start. */
export function answerNotification(conversationId: string, title: string | null | undefined, content: string): AnswerNotification {
  return {
    title: title?.trim() || i18n.t('chat:notifications.newAnswer'),
    options: { body: plainText(content), tag: conversationId, lang: i18n.language, icon: '/icons/icon-192.png' },
  };
}

type ChannelMessage =
  | { kind: 'claim'; messageId: string; tabId: string; visible: boolean }
  | { kind: 'notified'; messageId: string; tabId: string };

interface Heard {
  at: number;
  visible: boolean;
  notified: boolean;
  hidden: Set<string>;
}

export interface ClaimCoordinator {
  /** Resolves true when this tab is the one to notify about `messageId`. */
  claim(messageId: string, visible: () => boolean): Promise<boolean>;
  close(): void;
}

/** The one-tab rule over a BroadcastChannel (see the top of this file). */
export function createClaimCoordinator({
  tabId = randomId(),
  wait = CLAIM_WAIT_MS,
  channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(NOTIFY_CHANNEL),
}: { tabId?: string; wait?: number; channel?: BroadcastChannel | null } = {}): ClaimCoordinator {
  const heard = new Map<string, Heard>();
  const entry = (messageId: string) => {
    const now = Date.now();
    for (const [id, old] of heard) if (now - old.at > FORGET_AFTER_MS) heard.delete(id);
    let found = heard.get(messageId);
    if (!found) {
      found = { at: now, visible: false, notified: false, hidden: new Set() };
      heard.set(messageId, found);
    }
    return found;
  };
  const onMessage = (event: MessageEvent<ChannelMessage>) => {
    const message = event.data;
    if (!message || typeof message.messageId !== 'string') return;
    const seen = entry(message.messageId);
    if (message.kind === 'notified') seen.notified = true;
    else if (message.visible) seen.visible = true;
    else seen.hidden.add(message.tabId);
  };
  channel?.addEventListener('message', onMessage);
  const post = (message: ChannelMessage) => channel?.postMessage(message);

  return {
    async claim(messageId, visible) {
      const isVisible = visible();
      post({ kind: 'claim', messageId, tabId, visible: isVisible });
      if (isVisible) return false;
      if (!channel) return true;
      await new Promise((resolve) => setTimeout(resolve, wait));
      const seen = entry(messageId);
      if (visible() || seen.visible || seen.notified) return false;
      for (const other of seen.hidden) if (other < tabId) return false;
      seen.notified = true;
      post({ kind: 'notified', messageId, tabId });
      return true;
    },
    close() {
      channel?.removeEventListener('message', onMessage);
      channel?.close();
    },
  };
}

type TitleLookup = (conversationId: string) => string | null | undefined;

/** A notification's title: the conversation as this tab's list or thread knows it. */
const chatTitle: TitleLookup = (id) => {
  const { list, threads } = useChatStore.getState();
  return list.items.find((c) => c._id === id)?.title ?? threads[id]?.conversation?.title;
};
let titleLookup: TitleLookup = chatTitle;

/** Where titles come from: the chat store (tests give their own; null: the store again). */
export function setConversationTitleLookup(lookup: TitleLookup | null): void {
  titleLookup = lookup ?? chatTitle;
}

const isVisible = () => document.visibilityState === 'visible';

/** Shows the notification; a click focuses the window and opens the conversation. */
export function showAnswerNotification(conversationId: string, { title, options }: AnswerNotification): Notification | null {
  try {
    const notification = new Notification(title, options);
    notification.onclick = () => {
      window.focus();
      navigateTo(`/chat/${encodeURIComponent(conversationId)}`);
      notification.close();
    };
    return notification;
  } catch {
    // Some browsers (Chrome on Android) allow notifications only from a service worker.
    return null;
  }
}

/** While started: the tabs' agreement on who notifies, and the titles seen in frames. */
let active: { coordinator: ClaimCoordinator; titles: Map<string, string | null> } | null = null;

const remember = ({ conversation }: { conversation: { _id: string; title: string | null } }) => {
  active?.titles.set(conversation._id, conversation.title);
};

async function onCompleted({ conversationId, message, finishReason }: ServerFrames['message.completed']) {
  if (!active) return;
  const { coordinator, titles } = active;
  const conditions = {
    finishReason,
    enabled: useLocalSettingsStore.getState().notifications,
    permission: notificationPermission(),
  };
  // A visible tab still announces itself, so that hidden ones stay quiet.
  if (!wantsNotification({ ...conditions, visible: false })) return;
  if (!(await coordinator.claim(message._id, isVisible))) return;
  // Read after the wait: a new conversation's title may have come meanwhile.
  const title = titleLookup(conversationId) ?? titles.get(conversationId);
  showAnswerNotification(conversationId, answerNotification(conversationId, title, message.content));
}

/**
 * The frames the notifier follows, for the app's socket router: finished answers, and
 * the titles of conversations (for a conversation the chat store does not know).
 */
export const answerNotificationFrames: SliceFrames<'conversation.created' | 'conversation.updated' | 'message.completed'> = {
  'conversation.created': remember,
  'conversation.updated': remember,
  'message.completed': (frame) => void onCompleted(frame),
};

/**
 * Announces finished answers (the router hands the frames over) on every page, for the
 * tab's life. Titles come from the chat store when it is loaded, else from the frames seen
 * here. Returns the function that stops it.
 */
export function startAnswerNotifications(): () => void {
  if (!active) active = { coordinator: createClaimCoordinator(), titles: new Map() };
  return () => {
    active?.coordinator.close();
    active = null;
  };
}
