/**
 * Sending and what follows it from this tab: a message (new, or an edit), a cancel, a
 * version picked, an answer made again, a rating. Each goes out as a socket frame (a
 * rating over REST); the frames that answer it are applied in frames.ts.
 */
import { chatSocket } from '@/lib/socket';
import { randomId } from '@/lib/random-id';
import type { Feedback } from '@/types/generated';
import { chatApi } from '../../api/chat-api';
import { applyFeedback, newestBelow } from '../thread';
import type { ChatContext } from './context';
import { DEFAULT_OPTIONS, MAX_IMAGE_SENDS, newChatKey, omit, type PendingSend } from './state';
import type { SendActions } from './types';

export function sendActions(ctx: ChatContext): SendActions {
  const { set, get, ratingRequests, counters, updateThread, withMessages, moveCurrent } = ctx;
  return {
    send: ({
      conversationId,
      content,
      model,
      webSearch,
      deepSearch = false,
      imageGeneration = false,
      attachments = [],
      projectId = null,
      editOf = null,
    }) => {
      // A project only places a new conversation; an existing one stays where it is.
      const project = conversationId === null && projectId ? projectId : undefined;
      const key = conversationId ?? newChatKey(project);
      const clientId = randomId();
      const entry = conversationId ? get().threads[conversationId] : undefined;
      // As the server places it: an edit beside the question it replaces, else after
      // the current message.
      const edited = editOf ? entry?.messages.find((m) => m._id === editOf) : undefined;
      const parentId = edited ? edited.parentId : (entry?.currentId ?? null);
      const sent = chatSocket.emit('chat.send', {
        clientId,
        conversationId,
        content,
        model: model || null,
        // An image is made alone: the server refuses it with a web search (invalid_frame).
        // A deep search is a web search too.
        webSearch: !imageGeneration && (webSearch || deepSearch),
        deepSearch: !imageGeneration && deepSearch,
        imageGeneration,
        projectId: project ?? null,
        attachments: attachments.map((a) => a.file._id),
        editOf,
      });
      if (!sent) {
        // The composer keeps what was typed (an edit, its box).
        set((state) => ({ errors: { ...state.errors, [key]: { code: 'offline', ...(editOf ? {} : { resend: true }) } } }));
        return null;
      }
      const pending: PendingSend = {
        clientId,
        conversationId,
        content,
        attachments,
        ...(imageGeneration ? { imageGeneration: true } : deepSearch ? { deepSearch: true } : {}),
        ...(project ? { projectId: project } : {}),
        parentId,
        ...(editOf ? { editOf } : {}),
        createdAt: new Date().toISOString(),
      };
      set((state) => ({
        pending: { ...state.pending, [clientId]: pending },
        // An edit's text was in its own box: the composer's draft stays.
        drafts: editOf ? state.drafts : { ...state.drafts, [key]: '' },
        edits: editOf ? omit(state.edits, editOf) : state.edits,
        errors: { ...state.errors, [key]: undefined },
        // "Create image" is for one send, as its answer is an image, not a conversation.
        ...(imageGeneration
          ? {
              options: { ...state.options, [key]: { ...DEFAULT_OPTIONS, ...state.options[key], imageGeneration: false } },
              imageSends: Object.fromEntries([
                ...Object.entries(state.imageSends).slice(-(MAX_IMAGE_SENDS - 1)),
                [clientId, true as const],
              ]),
            }
          : // Deep search is for one send (it reserves several searches); web search stays on.
            deepSearch
            ? { options: { ...state.options, [key]: { ...DEFAULT_OPTIONS, ...state.options[key], webSearch: true, deepSearch: false } } }
            : {}),
      }));
      return clientId;
    },

    cancel: (conversationId) => {
      const sent = chatSocket.emit('chat.cancel', { conversationId });
      if (sent) set((state) => ({ cancelling: { ...state.cancelling, [conversationId]: true } }));
      else set((state) => ({ errors: { ...state.errors, [conversationId]: { code: 'offline' } } }));
      return sent;
    },

    selectVersion: (conversationId, messageId) => {
      const sent = chatSocket.emit('conversation.select', { conversationId, messageId });
      if (!sent) {
        set((state) => ({ errors: { ...state.errors, [conversationId]: { code: 'offline' } } }));
        return false;
      }
      // Shown here at once, as the server will pick it; its conversation.updated agrees.
      moveCurrent(conversationId, (entry) => newestBelow(entry.messages, messageId));
      return true;
    },

    regenerate: (conversationId, messageId, model) => {
      const clientId = randomId();
      const sent = chatSocket.emit('chat.regenerate', { clientId, conversationId, messageId, model: model || null });
      if (!sent) {
        set((state) => ({ errors: { ...state.errors, [conversationId]: { code: 'offline' } } }));
        return null;
      }
      set((state) => ({
        regenerating: { ...state.regenerating, [clientId]: { conversationId, messageId } },
        errors: { ...state.errors, [conversationId]: undefined },
      }));
      return clientId;
    },

    setEdit: (messageId, text) =>
      set((state) => ({ edits: text === undefined ? omit(state.edits, messageId) : { ...state.edits, [messageId]: text } })),

    rateAnswer: async (conversationId, messageId, rating, comment) => {
      const before = get().threads[conversationId]?.messages.find((m) => m._id === messageId)?.feedback ?? null;
      const shown: Feedback | null = rating ? { rating, comment: comment?.trim() || null } : null;
      const request = ++counters.rating;
      ratingRequests.set(messageId, request);
      const settle = (feedback: Feedback | null) => {
        if (ratingRequests.get(messageId) !== request) return;
        ratingRequests.delete(messageId);
        updateThread(conversationId, (entry) => withMessages(entry, applyFeedback(entry.messages, messageId, feedback)));
      };
      updateThread(conversationId, (entry) => withMessages(entry, applyFeedback(entry.messages, messageId, shown)));
      try {
        const { data } = await chatApi.setFeedback(messageId, rating, comment);
        settle(data);
      } catch (error) {
        settle(before);
        throw error;
      }
    },
  };
}
