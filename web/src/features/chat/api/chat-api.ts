/**
 * The REST calls of the chat (docs/api.md): conversations, projects and uploaded files.
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
  Project,
  ProjectWithFiles,
  Rating,
} from '@/types/generated';

/** What `POST /api/projects` and `PATCH /api/projects/{id}` take; a field left out stays. */
export interface ProjectInput {
  name?: string;
  instructions?: string;
}

export const CONVERSATION_PAGE_SIZE = 20;

const projectPath = (id: string) => `/projects/${encodeURIComponent(id)}`;

export const chatApi = {
  /** Newest activity first; with `projectId`, only that project's conversations. */
  listConversations: (cursor: string | null, limit = CONVERSATION_PAGE_SIZE, projectId: string | null = null) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor) query.set('cursor', cursor);
    if (projectId) query.set('projectId', projectId);
    return api.get<Page<Conversation>>(`/conversations?${query.toString()}`);
  },
  getConversation: (id: string) =>
    api.get<Data<ConversationWithMessages>>(`/conversations/${encodeURIComponent(id)}`),
  renameConversation: (id: string, title: string) =>
    api.patch<Data<Conversation>>(`/conversations/${encodeURIComponent(id)}`, { title }),
  deleteConversation: (id: string) => api.delete<Done>(`/conversations/${encodeURIComponent(id)}`),
  /** Rates an answer, or with null takes its rating (and comment) back; answers the feedback as it now is. */
  setFeedback: (messageId: string, rating: Rating | null, comment?: string) =>
    api.put<Data<Feedback | null>>(`/messages/${encodeURIComponent(messageId)}/feedback`, {
      rating,
      ...(rating && comment?.trim() ? { comment: comment.trim() } : {}),
    }),
  /** Into a project, or out of any with null; its place in the list stays. */
  moveConversation: (id: string, projectId: string | null) =>
    api.put<Data<Conversation>>(`/conversations/${encodeURIComponent(id)}/project`, { projectId }),
  /** Most recently changed first. */
  listProjects: () => api.get<Data<Project[]>>('/projects'),
  getProject: (id: string) => api.get<Data<ProjectWithFiles>>(projectPath(id)),
  createProject: (input: Required<Pick<ProjectInput, 'name'>> & ProjectInput) =>
    api.post<Data<Project>>('/projects', input),
  updateProject: (id: string, input: ProjectInput) => api.patch<Data<Project>>(projectPath(id), input),
  /** Its conversations leave it, or are deleted with it (`deleteConversations`). */
  deleteProject: (id: string, deleteConversations: boolean) =>
    api.delete<Done>(`${projectPath(id)}${deleteConversations ? '?deleteConversations=true' : ''}`),
  /** Makes an uploaded document (never sent) one of the project's; removed by deleting the file. */
  addProjectFile: (id: string, fileId: string) => api.post<Data<ProjectWithFiles>>(`${projectPath(id)}/files`, { fileId }),
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
};
