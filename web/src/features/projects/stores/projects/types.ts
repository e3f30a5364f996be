/**
 * The store's shape: its state (state.ts) with the user's actions (actions.ts), a
 * project's documents (documents.ts) and the socket frames it applies (frames.ts). The
 * interfaces live here, apart from the code that builds them, so that context.ts (which
 * every part imports) can type `set`/`get` without importing a part: the slice's imports
 * go one way (index.ts -> parts -> context.ts -> types.ts).
 */
import type { ServerFrames } from '@/lib/socket-protocol';
import type { Attachment, Project } from '@/types/generated';
import type { ProjectInput } from '../../api/projects-api';
import type { ProjectState } from './state';

export interface ProjectActions {
  reset: () => void;
  loadProjects: () => Promise<void>;
  /** Filters the sidebar to a project (null: all conversations again) and loads what it shows. */
  select: (id: string | null) => void;
  loadConversations: () => Promise<void>;
  loadMoreConversations: () => Promise<void>;
  loadFiles: (id: string) => Promise<void>;
  create: (input: { name: string; instructions: string }) => Promise<Project>;
  update: (id: string, input: ProjectInput) => Promise<Project>;
  /** Deletes it and its documents; its conversations leave it, or go with it. */
  remove: (id: string, deleteConversations: boolean) => Promise<void>;
  /** Into a project, or out of any with null; the answer is applied like its frame. */
  move: (conversationId: string, projectId: string | null) => Promise<void>;
}

export interface ProjectDocumentActions {
  /** Uploads documents one after another and adds each to the project. */
  addDocuments: (projectId: string, files: readonly File[], documentMaxMb: number) => void;
  /** Stops an upload, or forgets a refused one. */
  dismissUpload: (projectId: string, localId: string) => void;
  /** Deletes one of the project's documents (`DELETE /api/files/{id}`). */
  removeFile: (projectId: string, fileId: string) => Promise<void>;
}

export interface ProjectFrameHandlers {
  /** A reconnect (`ready` after the first): what is shown is fetched again. */
  onReady: () => void;
  onProjectUpdated: (frame: ServerFrames['project.updated']) => void;
  onProjectDeleted: (frame: ServerFrames['project.deleted']) => void;
  onConversationCreated: (frame: ServerFrames['conversation.created']) => void;
  onConversationUpdated: (frame: ServerFrames['conversation.updated']) => void;
  onConversationDeleted: (frame: ServerFrames['conversation.deleted']) => void;
  onMessageCreated: (frame: ServerFrames['message.created']) => void;
  /** A `file.updated` frame: a project document's progress or end. */
  onFileUpdated: (file: Attachment) => void;
}

export type ProjectStore = ProjectState & ProjectActions & ProjectDocumentActions & ProjectFrameHandlers;
