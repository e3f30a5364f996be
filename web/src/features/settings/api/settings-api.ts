/** The settings calls of docs/api.md, typed. The language is saved by the auth store. */
import { api } from '@/lib/api-client';
import type { AiPersonalization, SettingsAnswer } from '@/types/generated';

export const settingsApi = {
  saveAiPersonalization: (aiPersonalization: AiPersonalization) => api.put<SettingsAnswer>('/settings', { aiPersonalization }),
};
