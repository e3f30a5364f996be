/**
 * The user's projects (docs/api.md "Projects"): the list, the one the sidebar is filtered
 * to with its conversations (`GET /api/conversations?projectId=`) and documents, and the
 * documents being uploaded into a project. What changes it: actions.ts (the user, REST),
 * documents.ts (a project's documents), frames.ts (the socket's frames, in every tab).
 *
 * The server announces a project (`project.updated`, with its conversation count)
 * whenever it changes: its name or instructions, a conversation started, moved in or out
 * or deleted, a document added or deleted. The frame carries no documents: the project
 * shown reads them again.
 */
import { EMPTY_LIST, type ConversationList, type LoadStatus } from '@/features/chat';
import type { Attachment, Project } from '@/types/generated';


/**
 * Why a document did not become the project's: `server` carries the server's message
 * (localized; null when the client already showed a toast for it), `tooLarge` is a
 * document over the plan's `documentMaxMb`, `unsupported` a file that is no document.
 */
export type ProjectUploadError = { kind: 'server'; message: string | null } | { kind: 'tooLarge'; max: number } | { kind: 'unsupported' };

/** A document on its way into a project (uploaded, then added); it leaves once it is the project's. */
export interface ProjectUpload {
  localId: string;
  name: string;
  size: number;
  status: 'uploading' | 'error';
  error: ProjectUploadError | null;
}

export interface ProjectState {
  projects: readonly Project[];
  status: LoadStatus;
  /** The project the sidebar shows, its conversations listed instead of all of them. */
  selectedId: string | null;
  /** The selected project's conversations, newest activity first, paged. */
  list: ConversationList;
  listStatus: LoadStatus;
  loadingMore: boolean;
  loadMoreFailed: boolean;
  /** Documents of projects, by project id (`GET /api/projects/{id}`), kept up to date by `file.updated`. */
  files: Record<string, readonly Attachment[] | undefined>;
  filesStatus: Record<string, LoadStatus | undefined>;
  /** Documents being uploaded into a project, by project id, or refused. */
  uploads: Record<string, readonly ProjectUpload[] | undefined>;
  /** Projects this tab deleted (not "deleted elsewhere"). */
  deletedHere: Record<string, true>;
}


export const initialState: ProjectState = {
  projects: [],
  status: 'idle',
  selectedId: null,
  list: EMPTY_LIST,
  listStatus: 'idle',
  loadingMore: false,
  loadMoreFailed: false,
  files: {},
  filesStatus: {},
  uploads: {},
  deletedHere: {},
};


export function omit<T>(record: Record<string, T>, key: string): Record<string, T> {
  if (!(key in record)) return record;
  const next = { ...record };
  delete next[key];
  return next;
}
