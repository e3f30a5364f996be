/**
 * The REST calls of the chat (docs/api.md): conversations, projects, uploaded files, and
 * the two answers the chat reads for gating and counters (the subscription's plan, the
 * usage limits).
 */
import { api } from '@/lib/api-client';
import type { Conversation, LimitInfo, Message, PlanType, Project, StoredFile, Usage } from '@/types/api';
import { normalizeFile } from '../lib/files';

export interface ConversationPage {
  data: Conversation[];
  nextCursor: string | null;
}

export interface ConversationWithMessages extends Conversation {
  messages: Message[];
}

/** `GET /api/projects/{id}` and `POST /api/projects/{id}/files`: the project and its documents. */
export interface ProjectWithFiles extends Project {
  files: StoredFile[];
}

/** What `POST /api/projects` and `PATCH /api/projects/{id}` take; a field left out stays. */
export interface ProjectInput {
  name?: string;
  instructions?: string;
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
  models: {
    baseChatModel: string;
    webSearchModel?: string;
    /** The model that makes images: an answer by it is an image answer, in every tab. */
    imageGenerationPreprocessingModel?: string;
  };
  /**
   * Whether the server implements a feature (the same for every plan). The web searches
   * are true when this server has a search provider configured for them.
   */
  available: {
    imageUpload: boolean;
    documentProcessing: boolean;
    googleWebSearch: boolean;
    openaiWebSearch: boolean;
    imageGeneration: boolean;
  };
  /** How many web searches one deep search reserves; 0 from a server without deep search. */
  deepSearchSearches: number;
  /** How many images one message may carry. */
  maxImagesPerMessage: number;
  /** Upload sizes in MB. */
  fileLimits: { imageMaxMb: number; documentMaxMb: number; storageMb: number };
}

/** docs/api.md "The plan object": what a server that sends no `fileLimits` enforces. */
export const DEFAULT_FILE_LIMITS: ChatPlan['fileLimits'] = { imageMaxMb: 10, documentMaxMb: 20, storageMb: 100 };

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
  const available = isObject(plan.available) ? plan.available : {};
  const fileLimits = isObject(plan.fileLimits) ? plan.fileLimits : {};
  const flag = (name: string) => features[name] === true;
  const count = (value: unknown, fallback: number) =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
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
      ...(typeof models.imageGenerationPreprocessingModel === 'string'
        ? { imageGenerationPreprocessingModel: models.imageGenerationPreprocessingModel }
        : {}),
    },
    available: {
      imageUpload: available.imageUpload === true,
      documentProcessing: available.documentProcessing === true,
      googleWebSearch: available.googleWebSearch === true,
      openaiWebSearch: available.openaiWebSearch === true,
      imageGeneration: available.imageGeneration === true,
    },
    deepSearchSearches: Math.floor(count(plan.deepSearchSearches, 0)),
    maxImagesPerMessage: Math.floor(count(plan.maxImagesPerMessage, 0)),
    fileLimits: {
      imageMaxMb: count(fileLimits.imageMaxMb, DEFAULT_FILE_LIMITS.imageMaxMb),
      documentMaxMb: count(fileLimits.documentMaxMb, DEFAULT_FILE_LIMITS.documentMaxMb),
      storageMb: count(fileLimits.storageMb, DEFAULT_FILE_LIMITS.storageMb),
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

const projectPath = (id: string) => `/projects/${encodeURIComponent(id)}`;

function withFiles(answer: { success: true; data: ProjectWithFiles }) {
  return { ...answer, data: { ...answer.data, files: (answer.data.files ?? []).map(normalizeFile) } };
}

export const chatApi = {
  /** Newest activity first; with `projectId`, only that project's conversations. */
  listConversations: (cursor: string | null, limit = CONVERSATION_PAGE_SIZE, projectId: string | null = null) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor) query.set('cursor', cursor);
    if (projectId) query.set('projectId', projectId);
    return api.get<{ success: true } & ConversationPage>(`/conversations?${query.toString()}`);
  },
  getConversation: (id: string) =>
    api.get<{ success: true; data: ConversationWithMessages }>(`/conversations/${encodeURIComponent(id)}`),
  renameConversation: (id: string, title: string) =>
    api.patch<{ success: true; data: Conversation }>(`/conversations/${encodeURIComponent(id)}`, { title }),
  deleteConversation: (id: string) => api.delete<{ success: true }>(`/conversations/${encodeURIComponent(id)}`),
  /** Into a project, or out of any with null; its place in the list stays. */
  moveConversation: (id: string, projectId: string | null) =>
    api.put<{ success: true; data: Conversation }>(`/conversations/${encodeURIComponent(id)}/project`, { projectId }),
  /** Most recently changed first. */
  listProjects: () => api.get<{ success: true; data: Project[] }>('/projects'),
  getProject: async (id: string) => withFiles(await api.get<{ success: true; data: ProjectWithFiles }>(projectPath(id))),
  createProject: (input: Required<Pick<ProjectInput, 'name'>> & ProjectInput) =>
    api.post<{ success: true; data: Project }>('/projects', input),
  updateProject: (id: string, input: ProjectInput) => api.patch<{ success: true; data: Project }>(projectPath(id), input),
  /** Its conversations leave it, or are deleted with it (`deleteConversations`). */
  deleteProject: (id: string, deleteConversations: boolean) =>
    api.delete<{ success: true }>(`${projectPath(id)}${deleteConversations ? '?deleteConversations=true' : ''}`),
  /** Makes an uploaded document (never sent) one of the project's; removed by deleting the file. */
  addProjectFile: async (id: string, fileId: string) =>
    withFiles(await api.post<{ success: true; data: ProjectWithFiles }>(`${projectPath(id)}/files`, { fileId })),
  /** `POST /api/files`: one part named `file`, with its name. An image, or a document that is still being read. */
  uploadFile: async (file: Blob, name: string, signal?: AbortSignal) => {
    const body = new FormData();
    body.append('file', file, name);
    const answer = await api.post<{ success: true; data: StoredFile }>('/files', body, signal ? { signal } : undefined);
    return { ...answer, data: normalizeFile(answer.data) };
  },
  /** `GET /api/files/{id}/info`: the file as it now is; 404 `not_found` once it is gone. */
  getFileInfo: async (id: string) => {
    const answer = await api.get<{ success: true; data: StoredFile }>(`/files/${encodeURIComponent(id)}/info`);
    return { ...answer, data: normalizeFile(answer.data) };
  },
  /** Only a file not sent yet can be removed (`file_in_use` after). */
  deleteFile: (id: string) => api.delete<{ success: true }>(`/files/${encodeURIComponent(id)}`),
  getSubscription: () => api.get<unknown>('/subscription'),
  getUsage: () => api.get<unknown>('/usage/limits'),
};
