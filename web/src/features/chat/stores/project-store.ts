/**
 * The user's projects (docs/api.md "Projects"): the list, the one the sidebar is filtered
 * to with its conversations (`GET /api/conversations?projectId=`) and documents, and the
 * documents being uploaded into a project. REST loads it; frames keep it live (applied
 * by chat-sync.ts through the `on…` actions here), in every tab.
 *
 * The server announces a project (`project.updated`, with its conversation count)
 * whenever it changes: its name or instructions, a conversation started, moved in or out
 * or deleted, a document added or deleted. The frame carries no documents: the project
 * shown reads them again.
 */
import { create } from 'zustand';
import { errorMessage, isApiError } from '@/lib/api-client';
import { randomId } from '@/lib/random-id';
import type { ServerFrames } from '@/lib/socket-protocol';
import type { Attachment, Conversation, Project } from '@/types/generated';
import { chatApi, type ProjectInput } from '../api/chat-api';
import { newerFile } from '../lib/files';
import { isDocumentFile } from './attach-files';
import { useChatStore } from './chat';
import {
  appendPage,
  EMPTY_LIST,
  removeConversation,
  replaceWithFirstPage,
  touchConversation,
  upsertConversation,
  type ConversationList,
} from './conversation-list';
import { removeProject, replaceProjects, upsertProject } from './project-list';

type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

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
  /** Uploads documents one after another and adds each to the project. */
  addDocuments: (projectId: string, files: readonly File[], documentMaxMb: number) => void;
  /** Stops an upload, or forgets a refused one. */
  dismissUpload: (projectId: string, localId: string) => void;
  /** Deletes one of the project's documents (`DELETE /api/files/{id}`). */
  removeFile: (projectId: string, fileId: string) => Promise<void>;

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

export type ProjectStore = ProjectState & ProjectActions;

const initialState: ProjectState = {
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

// Bookkeeping of fetches in flight: what frames changed while they ran wins over them.
let projectsRequest = 0;
let touchedProjects = new Set<string>();
/** Projects deleted since the last reset: ids are never reused, so none comes back. */
let goneProjects = new Set<string>();
let listRequest = 0;
let touchedDuringLoad = new Set<string>();
let deletedDuringLoad = new Set<string>();
const filesRequests = new Map<string, number>();

// Uploads in flight, by localId, so a dismissal stops the request.
const controllers = new Map<string, AbortController>();
// Each project's uploads run one after another: the server counts its documents before
// adding one, so parallel adds could pass the limit.
const queues = new Map<string, Promise<void>>();

/**
 * The latest `file.updated` of files no project shows yet: a frame may come before the
 * upload's answer, or before the project's documents are loaded.
 */
const earlyUpdates = new Map<string, Attachment>();
const EARLY_UPDATES_KEPT = 100;

function rememberUpdate(file: Attachment): void {
  const known = earlyUpdates.get(file._id);
  earlyUpdates.delete(file._id);
  earlyUpdates.set(file._id, known ? newerFile(known, file) : file);
  if (earlyUpdates.size > EARLY_UPDATES_KEPT) earlyUpdates.delete(earlyUpdates.keys().next().value!);
}

/** The server's documents, each the copy further along if a frame told more. */
function withEarlyUpdates(files: readonly Attachment[]): Attachment[] {
  return files.map((file) => {
    const early = earlyUpdates.get(file._id);
    return early ? newerFile(file, early) : file;
  });
}

function omit<T>(record: Record<string, T>, key: string): Record<string, T> {
  if (!(key in record)) return record;
  const next = { ...record };
  delete next[key];
  return next;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

export const useProjectStore = create<ProjectStore>()((set, get) => {
  const patchUpload = (projectId: string, localId: string, change: Partial<ProjectUpload>) =>
    set((state) => ({
      uploads: {
        ...state.uploads,
        [projectId]: (state.uploads[projectId] ?? []).map((u) => (u.localId === localId ? { ...u, ...change } : u)),
      },
    }));

  const dropUpload = (projectId: string, localId: string) =>
    set((state) => {
      const left = (state.uploads[projectId] ?? []).filter((u) => u.localId !== localId);
      return { uploads: left.length > 0 ? { ...state.uploads, [projectId]: left } : omit(state.uploads, projectId) };
    });

  const hasUpload = (projectId: string, localId: string) =>
    (get().uploads[projectId] ?? []).some((u) => u.localId === localId && u.status === 'uploading');

  const setFiles = (projectId: string, files: readonly Attachment[]) =>
    set((state) => ({
      files: { ...state.files, [projectId]: withEarlyUpdates(files) },
      filesStatus: { ...state.filesStatus, [projectId]: 'ready' },
    }));

  const forgetProject = (id: string) => {
    for (const upload of get().uploads[id] ?? []) controllers.get(upload.localId)?.abort();
    // A page of its conversations on its way is of no use any more.
    if (get().selectedId === id) listRequest += 1;
    set((state) => ({
      projects: removeProject(state.projects, id),
      files: omit(state.files, id),
      filesStatus: omit(state.filesStatus, id),
      uploads: omit(state.uploads, id),
      ...(state.selectedId === id
        ? { selectedId: null, list: EMPTY_LIST, listStatus: 'idle' as const, loadingMore: false, loadMoreFailed: false }
        : {}),
    }));
  };

  /** One document: uploaded as the composer uploads one, then made the project's. */
  const uploadOne = async (projectId: string, localId: string, file: File) => {
    if (!hasUpload(projectId, localId)) return;
    const controller = new AbortController();
    controllers.set(localId, controller);
    let uploaded: Attachment | null = null;
    try {
      uploaded = (await chatApi.uploadFile(file, file.name, controller.signal)).data;
      if (!hasUpload(projectId, localId)) {
        // Dismissed while its answer was on its way: nothing will use it.
        void chatApi.deleteFile(uploaded._id).catch(() => undefined);
        return;
      }
      const { data } = await chatApi.addProjectFile(projectId, uploaded._id);
      setFiles(projectId, data.files);
      dropUpload(projectId, localId);
    } catch (error) {
      if (isAbort(error)) return;
      // Not the project's (full, refused, gone): the upload would only wait for the sweep.
      if (uploaded) void chatApi.deleteFile(uploaded._id).catch(() => undefined);
      if (hasUpload(projectId, localId)) {
        patchUpload(projectId, localId, { status: 'error', error: { kind: 'server', message: errorMessage(error) } });
      }
    } finally {
      controllers.delete(localId);
    }
  };

  return {
    ...initialState,

    reset: () => {
      controllers.forEach((controller) => controller.abort());
      controllers.clear();
      queues.clear();
      earlyUpdates.clear();
      projectsRequest += 1;
      listRequest += 1;
      filesRequests.clear();
      touchedProjects = new Set();
      goneProjects = new Set();
      touchedDuringLoad = new Set();
      deletedDuringLoad = new Set();
      set(initialState);
    },

    loadProjects: async () => {
      const request = ++projectsRequest;
      touchedProjects = new Set();
      set((state) => ({ status: state.status === 'ready' ? 'ready' : 'loading' }));
      try {
        const { data } = await chatApi.listProjects();
        if (request !== projectsRequest) return;
        set((state) => ({
          projects: replaceProjects(state.projects, data, touchedProjects, goneProjects),
          status: 'ready',
        }));
        // The selected project is gone (deleted while this tab was away).
        const selected = get().selectedId;
        if (selected && !get().projects.some((p) => p._id === selected)) forgetProject(selected);
      } catch {
        if (request === projectsRequest) set((state) => ({ status: state.status === 'ready' ? 'ready' : 'error' }));
      }
    },

    select: (id) => {
      if (id === get().selectedId) return;
      listRequest += 1;
      set({ selectedId: id, list: EMPTY_LIST, listStatus: id ? 'loading' : 'idle', loadingMore: false, loadMoreFailed: false });
      if (!id) return;
      void get().loadConversations();
      void get().loadFiles(id);
    },

    loadConversations: async () => {
      const projectId = get().selectedId;
      if (!projectId) return;
      const request = ++listRequest;
      touchedDuringLoad = new Set();
      deletedDuringLoad = new Set();
      set((state) => ({ listStatus: state.listStatus === 'ready' ? 'ready' : 'loading', loadMoreFailed: false }));
      try {
        const page = await chatApi.listConversations(null, undefined, projectId);
        if (request !== listRequest) return;
        set((state) => ({
          list: replaceWithFirstPage(
            state.list,
            // Only what is still in the project (a frame may have moved one out meanwhile).
            { items: page.data.filter((c) => c.projectId === projectId), nextCursor: page.nextCursor },
            touchedDuringLoad,
            deletedDuringLoad,
          ),
          listStatus: 'ready',
        }));
      } catch {
        if (request === listRequest) set((state) => ({ listStatus: state.listStatus === 'ready' ? 'ready' : 'error' }));
      }
    },

    loadMoreConversations: async () => {
      const { list, loadingMore, selectedId } = get();
      if (loadingMore || !list.nextCursor || !selectedId) return;
      const request = listRequest;
      set({ loadingMore: true, loadMoreFailed: false });
      try {
        const page = await chatApi.listConversations(list.nextCursor, undefined, selectedId);
        if (request !== listRequest) return;
        set((state) => ({
          list: appendPage(state.list, {
            items: page.data.filter((c) => !deletedDuringLoad.has(c._id)),
            nextCursor: page.nextCursor,
          }),
        }));
      } catch {
        if (request === listRequest) set({ loadMoreFailed: true });
      } finally {
        if (request === listRequest) set({ loadingMore: false });
      }
    },

    loadFiles: async (id) => {
      const request = (filesRequests.get(id) ?? 0) + 1;
      filesRequests.set(id, request);
      set((state) => ({
        filesStatus: { ...state.filesStatus, [id]: state.filesStatus[id] === 'ready' ? 'ready' : 'loading' },
      }));
      try {
        const { data } = await chatApi.getProject(id);
        if (filesRequests.get(id) !== request) return;
        // The answer is the project too, as it now is.
        if (!goneProjects.has(id) && get().projects.some((p) => p._id === id)) {
          const { files, ...project } = data;
          set((state) => ({ projects: upsertProject(state.projects, project) }));
          setFiles(id, files);
        }
      } catch (error) {
        if (filesRequests.get(id) !== request) return;
        // Not (or no longer) the user's: it is gone.
        if (isApiError(error) && error.status === 404) {
          forgetProject(id);
          return;
        }
        set((state) => ({
          filesStatus: { ...state.filesStatus, [id]: state.filesStatus[id] === 'ready' ? 'ready' : 'error' },
        }));
      }
    },

    create: async ({ name, instructions }) => {
      const { data } = await chatApi.createProject({ name, ...(instructions ? { instructions } : {}) });
      get().onProjectUpdated({ project: data });
      return data;
    },

    update: async (id, input) => {
      const { data } = await chatApi.updateProject(id, input);
      get().onProjectUpdated({ project: data });
      return data;
    },

    remove: async (id, deleteConversations) => {
      set((state) => ({ deletedHere: { ...state.deletedHere, [id]: true } }));
      if (deleteConversations) {
        // Their deletion is this tab's doing: no "deleted elsewhere" for the one shown.
        const chat = useChatStore.getState();
        const inProject = new Set<string>();
        for (const c of [...chat.list.items, ...(get().selectedId === id ? get().list.items : [])]) {
          if (c.projectId === id) inProject.add(c._id);
        }
        for (const [cid, entry] of Object.entries(chat.threads)) if (entry.conversation?.projectId === id) inProject.add(cid);
        chat.markDeletedHere([...inProject]);
      }
      try {
        await chatApi.deleteProject(id, deleteConversations);
      } catch (error) {
        set((state) => ({ deletedHere: omit(state.deletedHere, id) }));
        throw error;
      }
      get().onProjectDeleted({ projectId: id });
    },

    move: async (conversationId, projectId) => {
      const { data } = await chatApi.moveConversation(conversationId, projectId);
      // The frames follow; this tab shows the move at once.
      useChatStore.getState().onConversationUpdated({ conversation: data });
      get().onConversationUpdated({ conversation: data });
    },

    addDocuments: (projectId, files, documentMaxMb) => {
      const picked = files.map((file) => {
        const error: ProjectUploadError | null = !isDocumentFile(file)
          ? { kind: 'unsupported' }
          : file.size > documentMaxMb * 1024 * 1024
            ? { kind: 'tooLarge', max: documentMaxMb }
            : null;
        const upload: ProjectUpload = {
          localId: randomId(),
          name: file.name || 'document',
          size: file.size,
          status: error ? 'error' : 'uploading',
          error,
        };
        return { file, upload };
      });
      if (picked.length === 0) return;
      set((state) => ({
        uploads: { ...state.uploads, [projectId]: [...(state.uploads[projectId] ?? []), ...picked.map((p) => p.upload)] },
      }));
      for (const { file, upload } of picked) {
        if (upload.status !== 'uploading') continue;
        const next = (queues.get(projectId) ?? Promise.resolve()).then(() => uploadOne(projectId, upload.localId, file));
        queues.set(projectId, next);
        void next.finally(() => {
          if (queues.get(projectId) === next) queues.delete(projectId);
        });
      }
    },

    dismissUpload: (projectId, localId) => {
      controllers.get(localId)?.abort();
      dropUpload(projectId, localId);
    },

    removeFile: async (projectId, fileId) => {
      await chatApi.deleteFile(fileId);
      // It leaves this tab's list now; the project's `project.updated` follows, and every
      // tab showing the project reads its documents again.
      set((state) => ({
        files: { ...state.files, [projectId]: (state.files[projectId] ?? []).filter((f) => f._id !== fileId) },
      }));
    },

    // --- frames ---------------------------------------------------------------------

    onReady: () => {
      // Frames were missed while disconnected: what is shown is fetched again.
      const { status, selectedId } = get();
      if (status !== 'idle') void get().loadProjects();
      if (selectedId) {
        void get().loadConversations();
        void get().loadFiles(selectedId);
      }
    },

    onProjectUpdated: ({ project }) => {
      if (goneProjects.has(project._id)) return;
      touchedProjects.add(project._id);
      set((state) => ({ projects: upsertProject(state.projects, project) }));
      // Its documents may have changed (one added or deleted, here or in another tab):
      // the frame does not carry them, so the project shown reads them again.
      if (get().selectedId === project._id) void get().loadFiles(project._id);
    },

    onProjectDeleted: ({ projectId }) => {
      goneProjects.add(projectId);
      touchedProjects.delete(projectId);
      forgetProject(projectId);
    },

    onConversationCreated: ({ conversation }) => {
      if (!conversation.projectId || conversation.projectId !== get().selectedId) return;
      touchedDuringLoad.add(conversation._id);
      set((state) => ({ list: upsertConversation(state.list, conversation) }));
    },

    onConversationUpdated: ({ conversation }) => {
      const selected = get().selectedId;
      if (!selected) return;
      // An archived conversation leaves the project's list as it leaves the main one.
      if (conversation.projectId === selected && !conversation.archived) {
        touchedDuringLoad.add(conversation._id);
        deletedDuringLoad.delete(conversation._id);
        set((state) => ({ list: upsertConversation(state.list, conversation) }));
      } else if (get().list.items.some((c) => c._id === conversation._id) || get().listStatus === 'loading') {
        // Moved out, archived (or its project deleted): a page being fetched may still hold it.
        deletedDuringLoad.add(conversation._id);
        set((state) => ({ list: removeConversation(state.list, conversation._id) }));
      }
    },

    onConversationDeleted: ({ conversationId }) => {
      deletedDuringLoad.add(conversationId);
      set((state) => ({ list: removeConversation(state.list, conversationId) }));
    },

    onMessageCreated: ({ conversationId, message }) => {
      const { list } = get();
      if (!list.items.some((c) => c._id === conversationId)) return;
      touchedDuringLoad.add(conversationId);
      set({ list: touchConversation(list, conversationId, message.createdAt) });
    },

    onFileUpdated: (update) => {
      const projectId = Object.keys(get().files).find((id) => get().files[id]!.some((f) => f._id === update._id));
      if (!projectId) {
        rememberUpdate(update);
        return;
      }
      const current = get().files[projectId]!;
      const next = current.map((f) => (f._id === update._id ? newerFile(f, update) : f));
      // A late progress after the end changes nothing: no render.
      if (next.some((f, i) => f !== current[i])) set((state) => ({ files: { ...state.files, [projectId]: next } }));
    },
  };
});

/** The project a conversation is in, as this tab knows it; null when none or unknown. */
export function projectOf(projects: readonly Project[], conversation: Pick<Conversation, 'projectId'> | null | undefined): Project | null {
  const id = conversation?.projectId;
  return id ? (projects.find((p) => p._id === id) ?? null) : null;
}
