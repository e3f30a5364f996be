/**
 * What the user's plan allows in the composer (SPEC §5, §6; docs/api.md "The plan
 * object"). The server checks everything again: this only decides what the controls do.
 */
import type { AppErrorCode } from '@/lib/error-codes';
import { MAX_DOCUMENTS_PER_MESSAGE, type ErrorCode, type Plan, type UsageService } from '@/types/generated';
import type { AttachmentLimits } from '../stores/attachments';
import type { ChatMessage } from '../stores/thread';

export type WebSearchGate =
  /** The toggle works: a web search feature of the plan has a provider on this server. */
  | 'available'
  /**
   * The plan has web search, but this server has no search provider for it
   * (`available`): the toggle is disabled and says so, never pretending it works.
   */
  | 'unconfigured'
  /** SPEC §8 "Web search is a premium feature". */
  | 'premium'
  /** The plan is not known yet (loading, or it failed to load): the toggle waits. */
  | 'unknown';

export type DocumentGate =
  /** Documents can be attached: the plan has document processing and the server takes them. */
  | 'available'
  /** SPEC §8 "Document upload is a premium feature". */
  | 'premium'
  /** A plan with document processing, but the server takes no documents yet (`available`). */
  | 'comingSoon'
  | 'unknown';

export type ImageGenerationGate =
  /** "Create image" works: the plan has image generation and the server makes images. */
  | 'available'
  /** "Image generation is a premium feature". */
  | 'premium'
  /** A plan with image generation on a server that makes no images yet: no toggle. */
  | 'comingSoon'
  | 'unknown';

export type ProjectGate =
  /** Projects can be created, changed, filled and moved into: the plan has `projectManagement`. */
  | 'available'
  /**
   * "Project management is a premium feature": projects the user already has (from a
   * bigger plan) are still listed, read, emptied and deleted.
   */
  | 'premium'
  | 'unknown';

export type ImageGate =
  /** Images can be attached, up to `maxImagesPerMessage` a message. */
  | 'available'
  /** The server takes no images yet (`available.imageUpload`), or the plan allows none. */
  | 'unavailable'
  | 'unknown';

/**
 * What the composer's attach button does: open the menu (photos, camera, document) when
 * images or documents can be attached, else answer at once with the document notice, as
 * before images.
 */
export type AttachButtonGate = 'menu' | Exclude<DocumentGate, 'available'>;

export function webSearchGate(plan: Plan | null): WebSearchGate {
  if (!plan) return 'unknown';
  const { features, available } = plan;
  if ((features.openaiWebSearch && available.openaiWebSearch) || (features.googleWebSearch && available.googleWebSearch)) {
    return 'available';
  }
  return features.openaiWebSearch || features.googleWebSearch ? 'unconfigured' : 'premium';
}

/**
 * Deep search goes with web search (premium, unconfigured and unknown alike); `absent`
 * when web search works but the server names no searches for a deep search
 * (`deepSearchSearches`, missing from a server before deep search): no toggle then.
 */
export type DeepSearchGate = WebSearchGate | 'absent';

export function deepSearchGate(plan: Plan | null): DeepSearchGate {
  const gate = webSearchGate(plan);
  return gate === 'available' && (plan?.deepSearchSearches ?? 0) <= 0 ? 'absent' : gate;
}

export function imageGenerationGate(plan: Plan | null): ImageGenerationGate {
  if (!plan) return 'unknown';
  if (!plan.features.imageGeneration) return 'premium';
  return plan.available.imageGeneration ? 'available' : 'comingSoon';
}

/**
 * Whether an answer is (or is becoming) an image: made by the plan's image model. Another
 * tab knows an image answer only by its frames, and the model is in the first of them.
 */
export function isImageModel(plan: Plan | null, model: string | null | undefined): boolean {
  const imageModel = plan?.models.imageGenerationPreprocessingModel;
  return !!model && !!imageModel && model === imageModel;
}

export function documentGate(plan: Plan | null): DocumentGate {
  if (!plan) return 'unknown';
  if (!plan.features.documentProcessing) return 'premium';
  return plan.available.documentProcessing ? 'available' : 'comingSoon';
}

/**
 * Projects follow the plan's feature flag alone. `available.projectManagement` is left
 * out on purpose: it was false while the server had projects but no client offered them,
 * and it only keeps the plan cards from selling them; this client is that offer.
 */
export function projectGate(plan: Plan | null): ProjectGate {
  if (!plan) return 'unknown';
  return plan.features.projectManagement ? 'available' : 'premium';
}

/** Images are for every plan (free gets one a message), once the server takes them. */
export function imageGate(plan: Plan | null): ImageGate {
  if (!plan) return 'unknown';
  return plan.available.imageUpload && plan.maxImagesPerMessage > 0 ? 'available' : 'unavailable';
}

/** How many images one message may carry; 0 when none can be attached. */
export function maxImages(plan: Plan | null): number {
  return plan && imageGate(plan) === 'available' ? plan.maxImagesPerMessage : 0;
}

/** The server counts a megabyte as 1024 × 1024 bytes. */
const MB = 1024 * 1024;

/**
 * What the composer takes: images a message and the size each may have after preparing;
 * documents a message (none unless the plan takes them) and the size each may have.
 */
export function attachmentLimits(plan: Plan | null): AttachmentLimits {
  return {
    max: maxImages(plan),
    maxBytes: (plan?.fileLimits.imageMaxMb ?? 0) * MB,
    maxDocuments: documentGate(plan) === 'available' ? MAX_DOCUMENTS_PER_MESSAGE : 0,
    documentMaxMb: plan?.fileLimits.documentMaxMb ?? 0,
  };
}

export function attachButtonGate(plan: Plan | null): AttachButtonGate {
  const documents = documentGate(plan);
  if (imageGate(plan) === 'available' || documents === 'available') return 'menu';
  return documents;
}

/** A gated control's message (SPEC §8), shown above the composer. */
export type GateNoticeKind =
  | 'webSearchPremium'
  | 'imageGenerationPremium'
  | 'documentUploadPremium'
  /** Creating, changing, filling a project or moving a conversation into one. */
  | 'projectsPremium'
  /** Before images: no attachment of any kind is taken yet. */
  | 'attachmentsComingSoon'
  /** Images are taken, documents not yet. */
  | 'documentsComingSoon';

/**
 * The notice for a document the plan or the server does not take (the menu's "Document",
 * a document dropped or pasted, any file dropped before images); null when it is taken.
 */
export function documentNotice(plan: Plan | null): GateNoticeKind | null {
  switch (documentGate(plan)) {
    case 'premium':
      return 'documentUploadPremium';
    case 'comingSoon':
      return imageGate(plan) === 'available' ? 'documentsComingSoon' : 'attachmentsComingSoon';
    default:
      return null;
  }
}

/** The models the picker offers: the plan's `chatModels`, in the plan's order. */
export function allowedModels(plan: Plan | null): string[] {
  return plan ? [...new Set(plan.chatModels)] : [];
}

/**
 * The model the picker starts on for a conversation: the model of its latest answer if
 * the plan allows it (the conversation's model field is only its first send's), else the
 * conversation's model, else the plan's base model, else the plan's first model.
 */
export function defaultModel(
  plan: Plan | null,
  conversationModel: string | null | undefined,
  messages: readonly ChatMessage[] = [],
): string | null {
  const models = allowedModels(plan);
  if (!plan || models.length === 0) return null;
  const allowed = (model: string | null | undefined): model is string => !!model && models.includes(model);
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i]!;
    if (message.role === 'assistant' && allowed(message.model)) return message.model;
  }
  if (allowed(conversationModel)) return conversationModel;
  if (allowed(plan.models.baseChatModel)) return plan.models.baseChatModel;
  return models[0] ?? null;
}

/**
 * The model to send: the user's pick while the plan still allows it, else the default.
 * null sends no `model`, and the server picks.
 */
export function resolveModel(selected: string | null, fallback: string | null, plan: Plan | null): string | null {
  const models = allowedModels(plan);
  if (selected && models.includes(selected)) return selected;
  return fallback && models.includes(fallback) ? fallback : null;
}

/** Error codes of a refused send that a bigger plan would lift: they offer "Upgrade plan". */
const UPGRADE_CODES = new Set<string>([
  'limit_reached',
  'search_limit_reached',
  // A deep search needs more web searches than are left today or this month.
  'deep_search_limit',
  'premium_required',
  'model_not_allowed',
  // Bigger plans carry more images a message (free 1 … pro 5).
  'too_many_images',
  // The day's or month's image generations are used up.
  'image_limit_reached',
] satisfies ErrorCode[]);

export function offersUpgrade(code: AppErrorCode): boolean {
  return UPGRADE_CODES.has(code);
}

/**
 * Codes of a failed send that the same send may pass a moment later, unchanged: the
 * server or the model was down or busy, the connection was lost, another answer was
 * still being written. A refusal about the message itself, or a limit a bigger plan
 * lifts, is not retried as it is.
 */
const RETRY_CODES = new Set<AppErrorCode>([
  'server_error',
  'service_unavailable',
  'server_busy',
  'server_shutting_down',
  'rate_limited',
  'generation_in_progress',
  'too_many_parallel_answers',
  'model_error',
  'network_error',
  'offline',
  'not_sent',
  'maybe_not_sent',
]);

export function offersRetry(code: AppErrorCode): boolean {
  return RETRY_CODES.has(code);
}

/** The response counter that blocks the next message, if one is used up. */
export function exhaustedPeriod(responses: UsageService | undefined): 'day' | 'month' | null {
  if (!responses) return null;
  if (!responses.daily.unlimited && responses.daily.remaining === 0) return 'day';
  if (!responses.monthly.unlimited && responses.monthly.remaining === 0) return 'month';
  return null;
}
