/** The settings and usage calls of docs/api.md, typed. The language is saved by the auth store. */
import { api } from '@/lib/api-client';
import type { AiPersonalization, Usage, UserSettings } from '@/types/api';

export const settingsApi = {
  saveAiPersonalization: (aiPersonalization: AiPersonalization) =>
    api.put<{ success: true; settings: UserSettings }>('/settings', { aiPersonalization }),

  getUsageLimits: () => api.get<Usage & { success: true }>('/usage/limits'),
};
