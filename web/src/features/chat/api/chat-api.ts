/**
 * The REST calls of the chat (docs/api.md): conversations, and the two answers the chat
 * reads for gating and counters (the subscription's plan, the usage limits).
 */
import { api } from '@/lib/api-client';
import type { Conversation, LimitInfo, Message, PlanType, Usage } from '@/types/api';

export interface ConversationPage {
  data: Conversation[];
  nextCursor: string | null;
}

export interface ConversationWithMessages extends Conversation {
  messages: Message[];
}

/** What the chat needs of a plan object (docs/api.md "The plan object"). */
export interface ChatPlan {
  planType: PlanType;
  name: string;
  features: {
    googleWebSearch: boolean;
    openaiWebSearch: boolean;
    documentProcessing: boolean;
    projectManagement: boolean;
    imageGeneration: boolean;
  };
  chatModels: string[];
  models: { baseChatModel: string; webSearchModel?: string };
}

export const CONVERSATION_PAGE_SIZE = 20;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * Reads the plan out of a subscription answer (`GET /api/subscription`, or the
 * `subscription` of a `subscription.updated` frame, which the socket leaves untyped).
 */
export function planFromSubscription(subscription: unknown): ChatPlan | null {
  if (!isObject(subscription)) return null;
  const plan = subscription.subscriptionPlan;
  if (!isObject(plan) || !isObject(plan.features) || !isObject(plan.models)) return null;
  const features = plan.features;
  const models = plan.models;
  const flag = (name: string) => features[name] === true;
  return {
    planType: (typeof plan.planType === 'string' ? plan.planType : 'free') as PlanType,
    name: typeof plan.name === 'string' ? plan.name : '',
    features: {
      googleWebSearch: flag('googleWebSearch'),
      openaiWebSearch: flag('openaiWebSearch'),
      documentProcessing: flag('documentProcessing'),
      projectManagement: flag('projectManagement'),
      imageGeneration: flag('imageGeneration'),
    },
    chatModels: Array.isArray(plan.chatModels)
      ? plan.chatModels.filter((m): m is string => typeof m === 'string')
      : [],
    models: {
      baseChatModel: typeof models.baseChatModel === 'string' ? models.baseChatModel : '',
      ...(typeof models.webSearchModel === 'string' ? { webSearchModel: models.webSearchModel } : {}),
    },
  };
}

/** The usage of a `ready` frame, `GET /api/usage/limits` or a `usage.updated` frame. */
export function usageFrom(value: unknown): Usage | null {
  if (!isObject(value) || !isObject(value.limitInfo)) return null;
  const limitInfo = value.limitInfo as unknown as LimitInfo;
  if (!isObject(limitInfo.services)) return null;
  return { hasActiveLimit: value.hasActiveLimit === true, limitInfo };
}

export const chatApi = {
  listConversations: (cursor: string | null, limit = CONVERSATION_PAGE_SIZE) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor) query.set('cursor', cursor);
    return api.get<{ success: true } & ConversationPage>(`/conversations?${query.toString()}`);
  },
  getConversation: (id: string) =>
    api.get<{ success: true; data: ConversationWithMessages }>(`/conversations/${encodeURIComponent(id)}`),
  renameConversation: (id: string, title: string) =>
    api.patch<{ success: true; data: Conversation }>(`/conversations/${encodeURIComponent(id)}`, { title }),
  deleteConversation: (id: string) => api.delete<{ success: true }>(`/conversations/${encodeURIComponent(id)}`),
  getSubscription: () => api.get<unknown>('/subscription'),
  getUsage: () => api.get<unknown>('/usage/limits'),
};
