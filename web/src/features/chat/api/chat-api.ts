/**
 * The REST calls of the chat (docs/api.md): conversations, messages, shares and uploaded
 * files (the projects' calls are the projects feature's).
 * The plan and usage the chat reads are the subscription feature's.
 */
import { api } from '@/lib/api-client';
import type {
  Attachment,
  Conversation,
  ConversationWithMessages,
  Data,
  Done,
  Feedback,
  Page,
  Rating,
  SearchHit,
  Share,
  SharedConversation,
} from '@/types/generated';

/** What `PATCH /api/conversations/{id}` takes: any of them, at least one. */
export interface ConversationPatch {
  title?: string;
  pinned?: boolean;
  archived?: boolean;
}

/** `GET /api/conversations/search`: a page of hits. */
export interface SearchPage {
  data: SearchHit[];
  nextCursor: string | null;
}

export const SEARCH_PAGE_SIZE = 20;

export const CONVERSATION_PAGE_SIZE = 20;

export const chatApi = {
  /** Newest activity first; with `projectId`, only that project's conversations. */
  listConversations: (
    cursor: string | null,
    limit = CONVERSATION_PAGE_SIZE,
    projectId: string | null = null,
    archived = false,
  ) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor) query.set('cursor', cursor);
    if (projectId) query.set('projectId', projectId);
    if (archived) query.set('archived', 'true');
    return api.get<Page<Conversation>>(`/conversations?${query.toString()}`);
  },
  /** Titles and messages of every branch, best first; archived conversations too. */
  searchConversations: (q: string, cursor: string | null, signal?: AbortSignal) => {
    const query = new URLSearchParams({ q, limit: String(SEARCH_PAGE_SIZE) });
    if (cursor) query.set('cursor', cursor);
    return api.get<SearchPage>(`/conversations/search?${query.toString()}`, signal ? { signal } : undefined);
  },
  getConversation: (id: string) =>
    api.get<Data<ConversationWithMessages>>(`/conversations/${encodeURIComponent(id)}`),
  /** Renames, pins or archives; every tab hears `conversation.updated`. */
  updateConversation: (id: string, patch: ConversationPatch) =>
    api.patch<Data<Conversation>>(`/conversations/${encodeURIComponent(id)}`, patch),
  deleteConversation: (id: string) => api.delete<Done>(`/conversations/${encodeURIComponent(id)}`),
  /** Rates an answer, or with null takes its rating (and comment) back; answers the feedback as it now is. */
  setFeedback: (messageId: string, rating: Rating | null, comment?: string) =>
    api.put<Data<Feedback | null>>(`/messages/${encodeURIComponent(messageId)}/feedback`, {
      rating,
      ...(rating && comment?.trim() ? { comment: comment.trim() } : {}),
    }),
  /** `POST /api/files`: one part named `file`, with its name. An image, or a document that is still being read. */
  uploadFile: (file: Blob, name: string, signal?: AbortSignal) => {
    const body = new FormData();
    body.append('file', file, name);
    return api.post<Data<Attachment>>('/files', body, signal ? { signal } : undefined);
  },
  /** `GET /api/files/{id}/info`: the file as it now is; 404 `not_found` once it is gone. */
  getFileInfo: (id: string) => api.get<Data<Attachment>>(`/files/${encodeURIComponent(id)}/info`),
  /** Only a file not sent yet can be removed (`file_in_use` after). */
  deleteFile: (id: string) => api.delete<Done>(`/files/${encodeURIComponent(id)}`),
  /** A read-only snapshot of the branch shown now, behind an unguessable link. */
  createShare: (conversationId: string, showName: boolean) =>
    api.post<Data<Share>>(`/conversations/${encodeURIComponent(conversationId)}/shares`, { showName }),
  /** The user's links, newest first. */
  listShares: () => api.get<Data<Share[]>>('/shares'),
  /** Revokes a link: it answers 404 at once. */
  deleteShare: (id: string) => api.delete<Done>(`/shares/${encodeURIComponent(id)}`),
  /** Public: works signed out (no token is needed; a signed-in viewer's is harmless). */
  getShared: (token: string) => api.get<Data<SharedConversation>>(`/shared/${encodeURIComponent(token)}`, { anonymous: true }),
  /** A copy of the snapshot in the viewer's own account. */
  continueShared: (token: string) => api.post<Data<Conversation>>(`/shared/${encodeURIComponent(token)}/continue`),
};
