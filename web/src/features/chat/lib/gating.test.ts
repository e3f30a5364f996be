import { describe, expect, it } from 'vitest';
import type { AppErrorCode } from '@/lib/error-codes';
import { fromServer } from '../stores/thread';
import {
  answer,
  basePlan,
  freePlan,
  usageAnswer,
  withDocuments,
  withoutImageGeneration,
  withoutImages,
  withoutSearch,
} from '@/test/chat-fixtures';
import {
  allowedModels,
  attachButtonGate,
  attachmentLimits,
  deepSearchGate,
  defaultModel,
  documentGate,
  documentNotice,
  exhaustedPeriod,
  imageGate,
  imageGenerationGate,
  isImageModel,
  maxImages,
  offersUpgrade,
  resolveModel,
  webSearchGate,
} from './gating';

describe('web search (SPEC §5: premium)', () => {
  const only = (feature: 'openaiWebSearch' | 'googleWebSearch', available: { openai: boolean; google: boolean }) => ({
    ...freePlan,
    features: { ...freePlan.features, [feature]: true },
    available: { ...freePlan.available, openaiWebSearch: available.openai, googleWebSearch: available.google },
  });

  it('is premium on a plan without a web search feature, whatever the server has', () => {
    expect(webSearchGate(freePlan)).toBe('premium');
    expect(webSearchGate(withoutSearch(freePlan))).toBe('premium');
  });

  it('works with OpenAI or Google web search when the server has a provider for that one', () => {
    expect(webSearchGate(basePlan)).toBe('available');
    expect(webSearchGate(only('openaiWebSearch', { openai: true, google: false }))).toBe('available');
    expect(webSearchGate(only('googleWebSearch', { openai: false, google: true }))).toBe('available');
  });

  it('is "not set up" when the plan has web search but the server no provider for its kind', () => {
    expect(webSearchGate(withoutSearch(basePlan))).toBe('unconfigured');
    expect(webSearchGate(only('openaiWebSearch', { openai: false, google: true }))).toBe('unconfigured');
    expect(webSearchGate(only('googleWebSearch', { openai: true, google: false }))).toBe('unconfigured');
  });

  it('waits while the plan is unknown', () => {
    expect(webSearchGate(null)).toBe('unknown');
  });

});

describe('deep search', () => {
  it('goes with web search: available, premium, not set up, unknown', () => {
    expect(deepSearchGate(basePlan)).toBe('available');
    expect(deepSearchGate(freePlan)).toBe('premium');
    expect(deepSearchGate(withoutSearch(basePlan))).toBe('unconfigured');
    expect(deepSearchGate(null)).toBe('unknown');
  });

  it('is not offered by a server that names no searches for it (before deep search)', () => {
    const plan = { ...basePlan, deepSearchSearches: 0 };
    expect(webSearchGate(plan)).toBe('available');
    expect(deepSearchGate(plan)).toBe('absent');
  });
});

describe('image generation (premium)', () => {
  it('works on a plan with the feature once the server makes images', () => {
    expect(imageGenerationGate(basePlan)).toBe('available');
  });

  it('is premium on a plan without the feature, whatever the server makes', () => {
    expect(imageGenerationGate(freePlan)).toBe('premium');
    expect(imageGenerationGate(withoutImageGeneration(freePlan))).toBe('premium');
  });

  it('is "coming soon" on a plan with the feature while the server makes none (`available.imageGeneration`)', () => {
    expect(imageGenerationGate(withoutImageGeneration(basePlan))).toBe('comingSoon');
  });

  it('waits while the plan is unknown', () => {
    expect(imageGenerationGate(null)).toBe('unknown');
  });

  it('knows an image answer by the plan’s image model', () => {
    expect(isImageModel(basePlan, 'gpt-image-1')).toBe(true);
    expect(isImageModel(basePlan, 'gpt-4o-mini')).toBe(false);
    expect(isImageModel(basePlan, null)).toBe(false);
    expect(isImageModel(null, 'gpt-image-1')).toBe(false);
    expect(isImageModel({ ...basePlan, models: { ...basePlan.models, imageGenerationPreprocessingModel: null } }, 'gpt-image-1')).toBe(false);
  });
});

describe('documents (SPEC §5: document upload is premium)', () => {
  it('are premium without document processing', () => {
    expect(documentGate(freePlan)).toBe('premium');
    expect(documentNotice(freePlan)).toBe('documentUploadPremium');
    expect(documentNotice(withoutImages(freePlan))).toBe('documentUploadPremium');
  });

  it('are "coming soon" on a plan with document processing, since the server takes none yet', () => {
    expect(documentGate(basePlan)).toBe('comingSoon');
    expect(documentNotice(basePlan)).toBe('documentsComingSoon');
    // Before images, nothing at all could be attached.
    expect(documentNotice(withoutImages(basePlan))).toBe('attachmentsComingSoon');
  });

  it('can be attached once the server takes them (`available.documentProcessing`), on a plan with the feature', () => {
    const base = withDocuments(basePlan);
    expect(documentGate(base)).toBe('available');
    expect(documentNotice(base)).toBeNull();
    expect(attachButtonGate(base)).toBe('menu');
    // Up to 10 a message on every plan, each at most the plan's documentMaxMb.
    expect(attachmentLimits(base)).toMatchObject({ maxDocuments: 10, documentMaxMb: 20 });
    // Even before images, documents alone open the menu.
    expect(attachButtonGate(withoutImages(base))).toBe('menu');
  });

  it('stay premium on a plan without the feature, whatever the server takes', () => {
    const free = withDocuments(freePlan);
    expect(documentGate(free)).toBe('premium');
    expect(documentNotice(free)).toBe('documentUploadPremium');
    expect(attachmentLimits(free).maxDocuments).toBe(0);
  });

  it('wait while the plan is unknown', () => {
    expect(documentGate(null)).toBe('unknown');
    expect(documentNotice(null)).toBeNull();
  });
});

describe('images (every plan, up to maxImagesPerMessage)', () => {
  it('can be attached on every plan once the server takes them', () => {
    for (const [plan, max] of [
      [freePlan, 1],
      [basePlan, 2],
      [{ ...basePlan, planType: 'plus' as const, maxImagesPerMessage: 3 }, 3],
      [{ ...basePlan, planType: 'pro' as const, maxImagesPerMessage: 5 }, 5],
    ] as const) {
      expect(imageGate(plan), plan.planType).toBe('available');
      expect(maxImages(plan), plan.planType).toBe(max);
      expect(attachButtonGate(plan), plan.planType).toBe('menu');
    }
  });

  it('keep the attach button as before while the server takes none (`available.imageUpload`)', () => {
    expect(imageGate(withoutImages(freePlan))).toBe('unavailable');
    expect(maxImages(withoutImages(freePlan))).toBe(0);
    expect(attachButtonGate(withoutImages(freePlan))).toBe('premium');
    expect(attachButtonGate(withoutImages(basePlan))).toBe('comingSoon');
  });

  it('are unavailable on a plan that allows none a message', () => {
    expect(imageGate({ ...basePlan, maxImagesPerMessage: 0 })).toBe('unavailable');
  });

  it('wait while the plan is unknown', () => {
    expect(imageGate(null)).toBe('unknown');
    expect(attachButtonGate(null)).toBe('unknown');
    expect(attachmentLimits(null)).toEqual({ max: 0, maxBytes: 0, maxDocuments: 0, documentMaxMb: 0 });
  });

  it('may each be the plan’s imageMaxMb, in MiB as the server counts', () => {
    expect(attachmentLimits(freePlan)).toEqual({ max: 1, maxBytes: 10 * 1024 * 1024, maxDocuments: 0, documentMaxMb: 20 });
  });
});

describe('models', () => {
  it('are the plan’s chatModels', () => {
    expect(allowedModels(basePlan)).toEqual(['gpt-4o-mini', 'gpt-4.1-mini']);
    expect(allowedModels(null)).toEqual([]);
  });

  it('start on the latest answer’s model, then the conversation’s, then the base model', () => {
    const messages = [fromServer(answer({ model: 'gpt-4.1-mini', status: 'complete' }), false)];
    expect(defaultModel(basePlan, 'gpt-4o-mini', messages)).toBe('gpt-4.1-mini');
    expect(defaultModel(basePlan, 'gpt-4.1-mini', [])).toBe('gpt-4.1-mini');
    expect(defaultModel(basePlan, null, [])).toBe('gpt-4o-mini');
  });

  it('skip models the plan no longer allows (a web search model, a downgrade)', () => {
    const messages = [fromServer(answer({ model: 'gpt-4o-mini-search-preview', status: 'complete' }), false)];
    expect(defaultModel(freePlan, 'gpt-4o', messages)).toBe('gpt-4o-mini');
    const odd = { ...freePlan, chatModels: ['gpt-4.1-mini'], models: { ...freePlan.models, baseChatModel: 'gpt-4o' } };
    expect(defaultModel(odd, null, [])).toBe('gpt-4.1-mini');
    expect(defaultModel(null, 'gpt-4o-mini', [])).toBeNull();
  });

  it('send the pick while allowed, else the default, else nothing', () => {
    expect(resolveModel('gpt-4.1-mini', 'gpt-4o-mini', basePlan)).toBe('gpt-4.1-mini');
    expect(resolveModel('gpt-4.1-mini', 'gpt-4o-mini', freePlan)).toBe('gpt-4o-mini');
    expect(resolveModel(null, 'gpt-4o-mini', basePlan)).toBe('gpt-4o-mini');
    expect(resolveModel('gpt-4o', null, null)).toBeNull();
  });
});

describe('refused sends', () => {
  it('offer "Upgrade plan" where a bigger plan helps', () => {
    for (const code of [
      'limit_reached',
      'search_limit_reached',
      'deep_search_limit',
      'premium_required',
      'model_not_allowed',
      'too_many_images',
      'image_limit_reached',
    ] satisfies AppErrorCode[]) {
      expect(offersUpgrade(code), code).toBe(true);
    }
    for (const code of [
      'generation_in_progress',
      'model_error',
      'message_too_long',
      'server_error',
      'offline',
      'search_unavailable',
      // A refused prompt is not a matter of plans.
      'image_refused',
    ] satisfies AppErrorCode[]) {
      expect(offersUpgrade(code), code).toBe(false);
    }
  });
});

describe('usage', () => {
  it('tells which response counter is used up', () => {
    expect(exhaustedPeriod(usageAnswer({ limit: 50, used: 50 }).limitInfo.services.responses)).toBe('day');
    expect(exhaustedPeriod(usageAnswer({ limit: 50, used: 12 }).limitInfo.services.responses)).toBeNull();
    expect(exhaustedPeriod(usageAnswer({ limit: null, used: 900 }).limitInfo.services.responses)).toBeNull();
    expect(exhaustedPeriod(undefined)).toBeNull();
  });
});
