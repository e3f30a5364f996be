import type { ChatPlan } from '../api/chat-api';
import type { Conversation, Message, Project, StoredFile } from '@/types/api';

export const CONVERSATION_ID = '01959b10-4c2e-7a01-8f3d-2b6e9c0a1d47';

export function conversation(overrides: Partial<Conversation> = {}): Conversation {
  return {
    _id: CONVERSATION_ID,
    title: null,
    model: 'gpt-4o-mini',
    webSearch: false,
    createdAt: '2025-03-14T10:15:02.118+00:00',
    updatedAt: '2025-03-14T10:15:02.118+00:00',
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
};
const MODELS = {
  baseChatModel: 'gpt-4o-mini',
  webSearchModel: 'gpt-4o-mini-search-preview',
  imageGenerationPreprocessingModel: 'gpt-image-1',
};
const FILE_LIMITS = { imageMaxMb: 10, documentMaxMb: 20, storageMb: 100 };

export const freePlan: ChatPlan = {
  planType: 'free',
  name: 'Free',
  features: NO_FEATURES,
  chatModels: ['gpt-4o-mini'],
  models: MODELS,
  available: AVAILABLE,
  deepSearchSearches: 6,
  maxImagesPerMessage: 1,
  fileLimits: FILE_LIMITS,
};

export const basePlan: ChatPlan = {
  planType: 'base',
  name: 'Base',
  features: { ...NO_FEATURES, openaiWebSearch: true, documentProcessing: true, imageGeneration: true },
  chatModels: ['gpt-4o-mini', 'gpt-4.1-mini'],
  models: MODELS,
  available: AVAILABLE,
  deepSearchSearches: 6,
  maxImagesPerMessage: 2,
  fileLimits: FILE_LIMITS,
};

/** Plus: projects and documents on top of Base (the default catalogue). */
export const plusPlan: ChatPlan = {
  ...basePlan,
  planType: 'plus',
  name: 'Plus',
  features: { ...basePlan.features, googleWebSearch: true, projectManagement: true },
  available: { ...AVAILABLE, documentProcessing: true },
  maxImagesPerMessage: 3,
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
export function withDocuments(plan: ChatPlan): ChatPlan {
  return { ...plan, available: { ...plan.available, documentProcessing: true } };
}

/** A plan as a server without a search provider shows it (`available` web searches false). */
export function withoutSearch(plan: ChatPlan): ChatPlan {
  return { ...plan, available: { ...plan.available, googleWebSearch: false, openaiWebSearch: false } };
}

/** A plan as a server from before image generation showed it (`available.imageGeneration` false). */
export function withoutImageGeneration(plan: ChatPlan): ChatPlan {
  return { ...plan, available: { ...plan.available, imageGeneration: false } };
}

/** A plan as a server from before image attachments showed it: nothing can be attached. */
export function withoutImages(plan: ChatPlan): ChatPlan {
  return { ...plan, available: { ...plan.available, imageUpload: false } };
}

/** An uploaded image as `POST /api/files` answers it. */
export function storedFile(overrides: Partial<StoredFile> = {}): StoredFile {
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
export function storedDocument(overrides: Partial<StoredFile> = {}): StoredFile {
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

/** A `GET /api/subscription` answer around a plan. */
export function subscriptionAnswer(plan: ChatPlan) {
  return {
    success: true,
    data: { _id: 's1', planType: plan.planType, status: 'active' },
    subscriptionPlan: {
      ...plan,
      limits: {},
      models: { ...plan.models, embeddingModel: 'text-embedding-3-small' },
    },
    pendingSubscription: null,
    pendingSubscriptionPlan: null,
  };
}

export function usageAnswer(daily: { limit: number | null; used: number }) {
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
