/** Test data of the chat and the projects: conversations, messages, plans, projects, files. */
import type { Attachment, Conversation, Message, Plan, Project, Subscription, SubscriptionAnswer, UsageAnswer } from '@/types/generated';

export const CONVERSATION_ID = '01959b10-4c2e-7a01-8f3d-2b6e9c0a1d47';

export function conversation(overrides: Partial<Conversation> = {}): Conversation {
  return {
    _id: CONVERSATION_ID,
    title: null,
    model: 'gpt-4o-mini',
    webSearch: false,
    createdAt: '2025-03-14T10:15:02.118+00:00',
    updatedAt: '2025-03-14T10:15:02.118+00:00',
    projectId: null,
    currentMessageId: null,
    pinned: false,
    archived: false,
    ...overrides,
  };
}

export function userMessage(overrides: Partial<Message> = {}): Message {
  return {
    _id: '01959b10-4c2f-7b10-8c11-0a1b2c3d4e5f',
    conversationId: CONVERSATION_ID,
    role: 'user',
    content: 'Hello there',
    status: 'complete',
    model: null,
    clientId: 'c1',
    createdAt: '2025-03-14T10:15:02.118+00:00',
    attachments: [],
    sources: [],
    parentId: null,
    feedback: null,
    ...overrides,
  };
}

export function answer(overrides: Partial<Message> = {}): Message {
  return {
    _id: '01959b10-4c3a-7d22-9a1b-6c7d8e9f0a1b',
    conversationId: CONVERSATION_ID,
    role: 'assistant',
    content: '',
    status: 'streaming',
    model: 'gpt-4o-mini',
    clientId: 'c1',
    createdAt: '2025-03-14T10:15:02.119+00:00',
    attachments: [],
    sources: [],
    parentId: '01959b10-4c2f-7b10-8c11-0a1b2c3d4e5f',
    feedback: null,
    ...overrides,
  };
}

const NO_FEATURES = {
  googleWebSearch: false,
  openaiWebSearch: false,
  documentProcessing: false,
  projectManagement: false,
  imageGeneration: false,
};

/**
 * What the server implements since image generation (docs/api.md `available`), on a
 * server with a search provider for both kinds of web search (documents apart: `withDocuments`).
 */
const AVAILABLE = {
  imageUpload: true,
  documentProcessing: false,
  googleWebSearch: true,
  openaiWebSearch: true,
  imageGeneration: true,
  projectManagement: true,
};
const MODELS = {
  baseChatModel: 'gpt-4o-mini',
  webPreprocessingModel: null,
  webContentProcessingModel: null,
  webSearchModel: 'gpt-4o-mini-search-preview',
  documentProcessingModel: null,
  embeddingModel: 'text-embedding-3-small',
  imageGenerationPreprocessingModel: 'gpt-image-1',
  imageAnalysisModel: null,
};
const FILE_LIMITS = { imageMaxMb: 10, documentMaxMb: 20, storageMb: 100 };
const NO_LIMITS = {
  responseLimit: { daily: null, monthly: null },
  webSearchLimit: { daily: null, monthly: null },
  imageGenerationLimit: { daily: null, monthly: null },
};
const price = (net: number) => ({ net, vat: 0, total: net });

export const freePlan: Plan = {
  planType: 'free',
  name: 'Free',
  rank: 0,
  features: NO_FEATURES,
  available: AVAILABLE,
  deepSearchSearches: 6,
  limits: NO_LIMITS,
  maxImagesPerMessage: 1,
  fileLimits: FILE_LIMITS,
  chatModels: ['gpt-4o-mini'],
  models: MODELS,
  prices: { EUR: price(0), HUF: price(0) },
};

export const basePlan: Plan = {
  ...freePlan,
  planType: 'base',
  name: 'Base',
  rank: 1,
  features: { ...NO_FEATURES, openaiWebSearch: true, documentProcessing: true, imageGeneration: true },
  chatModels: ['gpt-4o-mini', 'gpt-4.1-mini'],
  maxImagesPerMessage: 2,
  prices: { EUR: price(5), HUF: price(1500) },
};

/** Plus: projects and documents on top of Base (the default catalogue). */
export const plusPlan: Plan = {
  ...basePlan,
  planType: 'plus',
  name: 'Plus',
  rank: 2,
  features: { ...basePlan.features, googleWebSearch: true, projectManagement: true },
  available: { ...AVAILABLE, documentProcessing: true },
  maxImagesPerMessage: 3,
  prices: { EUR: price(10), HUF: price(3000) },
};

export const PROJECT_ID = '01a20ae9-dc6b-7235-91b6-b57c82486ed7';

export function project(overrides: Partial<Project> = {}): Project {
  return {
    _id: PROJECT_ID,
    name: 'Garden',
    instructions: 'Answer as a gardener.\nKeep it short.',
    conversations: 0,
    createdAt: '2025-03-14T10:00:00.000+00:00',
    updatedAt: '2025-03-14T10:00:00.000+00:00',
    ...overrides,
  };
}

/** A plan as a server that takes documents shows it (`available.documentProcessing`). */
export function withDocuments(plan: Plan): Plan {
  return { ...plan, available: { ...plan.available, documentProcessing: true } };
}

/** A plan as a server without a search provider shows it (`available` web searches false). */
export function withoutSearch(plan: Plan): Plan {
  return { ...plan, available: { ...plan.available, googleWebSearch: false, openaiWebSearch: false } };
}

/** A plan as a server from before image generation showed it (`available.imageGeneration` false). */
export function withoutImageGeneration(plan: Plan): Plan {
  return { ...plan, available: { ...plan.available, imageGeneration: false } };
}

/** A plan as a server from before image attachments showed it: nothing can be attached. */
export function withoutImages(plan: Plan): Plan {
  return { ...plan, available: { ...plan.available, imageUpload: false } };
}

/** An uploaded image as `POST /api/files` answers it. */
export function storedFile(overrides: Partial<Attachment> = {}): Attachment {
  const id = overrides._id ?? 'f1';
  return {
    _id: id,
    kind: 'image',
    name: 'cat.png',
    mime: 'image/png',
    size: 2048,
    width: 640,
    height: 480,
    url: `/api/files/${id}`,
    thumbnailUrl: `/api/files/${id}/thumbnail`,
    createdAt: '2025-03-14T10:15:01.000+00:00',
    status: 'ready',
    progress: 100,
    pages: null,
    ...overrides,
  };
}

/** An uploaded document as `POST /api/files` answers it: still being read, unless said otherwise. */
export function storedDocument(overrides: Partial<Attachment> = {}): Attachment {
  const id = overrides._id ?? 'd1';
  return {
    _id: id,
    kind: 'document',
    name: 'report.pdf',
    mime: 'application/pdf',
    size: 34_816,
    width: null,
    height: null,
    url: `/api/files/${id}`,
    thumbnailUrl: null,
    createdAt: '2025-03-14T10:15:01.000+00:00',
    status: 'processing',
    progress: 0,
    pages: 12,
    ...overrides,
  };
}

/** The subscription of a user on a plan, as `subscription.updated` carries it. */
export function subscriptionOn(plan: Plan): Subscription {
  return {
    data: {
      _id: 's1',
      planType: plan.planType,
      status: 'active',
      startDate: '2025-03-14T10:00:00.000+00:00',
      endDate: null,
      billingCycle: null,
      paymentMethod: null,
      currency: null,
      autoRenew: false,
      cancelAtPeriodEnd: false,
    },
    subscriptionPlan: plan,
    pendingSubscription: null,
    pendingSubscriptionPlan: null,
  };
}

/** A `GET /api/subscription` answer around a plan. */
export function subscriptionAnswer(plan: Plan): SubscriptionAnswer {
  return { success: true, ...subscriptionOn(plan) };
}

export function usageAnswer(daily: { limit: number | null; used: number }): UsageAnswer {
  const counter = (limit: number | null, used: number) => ({
    limit,
    used,
    remaining: limit === null ? null : Math.max(0, limit - used),
    unlimited: limit === null,
    resetsAt: '2025-03-15T00:00:00+00:00',
  });
  const service = (limit: number | null, used: number) => ({ daily: counter(limit, used), monthly: counter(null, used) });
  return {
    success: true,
    hasActiveLimit: true,
    limitInfo: {
      limitType: 'free',
      startDate: '2025-03-14T00:00:00+00:00',
      endDate: '2025-03-15T00:00:00+00:00',
      monthStartDate: '2025-03-01T00:00:00+00:00',
      monthEndDate: '2025-04-01T00:00:00+00:00',
      timezone: 'UTC',
      services: { responses: service(daily.limit, daily.used), searches: service(0, 0), images: service(0, 0) },
    },
  };
}
