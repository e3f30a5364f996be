/** The settings calls of docs/api.md, typed. The language is saved by the auth store. */
import { api, apiRequest } from '@/lib/api-client';
import type { AiPersonalization, Data, ImportResult, SettingsAnswer } from '@/types/generated';

export const settingsApi = {
  saveAiPersonalization: (aiPersonalization: AiPersonalization) => api.put<SettingsAnswer>('/settings', { aiPersonalization }),
  /** `GET /api/account/export`: the zip, streamed; `onProgress` counts its bytes as they come. */
  exportAccount: (onProgress: (received: number, total: number | null) => void, signal?: AbortSignal) =>
    apiRequest<Blob>('/account/export', { method: 'GET', asBlob: true, onProgress, ...(signal ? { signal } : {}) }),
  /** `POST /api/conversations/import`: our export's conversations.json or zip, or ChatGPT's conversations.json. */
  importConversations: (file: File) => {
    const body = new FormData();
    body.append('file', file, file.name);
    return api.post<Data<ImportResult>>('/conversations/import', body);
  },
};
