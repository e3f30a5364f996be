/**
 * The REST calls of projects (docs/api.md "Projects"): the projects themselves, their
 * documents, and moving a conversation into or out of one. Uploading a document is the
 * chat's `POST /api/files`, then `addProjectFile`.
 */
import { api } from '@/lib/api-client';
import type { Conversation, Data, Done, Project, ProjectWithFiles } from '@/types/generated';

/** What `POST /api/projects` and `PATCH /api/projects/{id}` take; a field left out stays. */
export interface ProjectInput {
  name?: string;
  instructions?: string;
}

const projectPath = (id: string) => `/projects/${encodeURIComponent(id)}`;

export const projectsApi = {
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
};
