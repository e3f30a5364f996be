/**
 * What the projects' actions, document uploads and frame handlers share: the store's
 * `set`/`get`, the bookkeeping of fetches in flight (what frames changed while they ran
 * wins over them), the uploads in flight, and the few steps all take.
 */
import type { StoreApi } from 'zustand';
import { chatApi, ConversationPager, EMPTY_LIST, listFieldsAccess, newerFile } from '@/features/chat';
import type { Attachment } from '@/types/generated';
import { removeProject } from '../project-list';
import { omit, type ProjectUpload } from './state';
import type { ProjectStore } from './types';

export interface ProjectContext {
  set: StoreApi<ProjectStore>['setState'];
  get: () => ProjectStore;
  /** The selected project's conversations, paged. */
  listPager: ConversationPager;
  /** The project list's fetch: its request, and what frames said meanwhile. */
  projectsLoad: {
    request: number;
    touched: Set<string>;
    /** Projects deleted since the last reset: ids are never reused, so none comes back. */
    gone: Set<string>;
  };
  filesRequests: Map<string, number>;
  /** Uploads in flight, by localId, so a dismissal stops the request. */
  controllers: Map<string, AbortController>;
  /**
   * Each project's uploads run one after another: the server counts its documents before
   * adding one, so parallel adds could pass the limit.
   */
  queues: Map<string, Promise<void>>;
  /**
   * The latest `file.updated` of files no project shows yet: a frame may come before the
   * upload's answer, or before the project's documents are loaded.
   */
  earlyUpdates: Map<string, Attachment>;
  rememberUpdate: (file: Attachment) => void;
  patchUpload: (projectId: string, localId: string, change: Partial<ProjectUpload>) => void;
  dropUpload: (projectId: string, localId: string) => void;
  hasUpload: (projectId: string, localId: string) => boolean;
  /** The server's documents of a project, each the copy further along if a frame told more. */
  setFiles: (projectId: string, files: readonly Attachment[]) => void;
  /** The project is gone (deleted, or not the user's): it leaves, with its uploads. */
  forgetProject: (id: string) => void;
}

const EARLY_UPDATES_KEPT = 100;

export function createProjectContext(set: ProjectContext['set'], get: ProjectContext['get']): ProjectContext {
  const controllers = new Map<string, AbortController>();
  const earlyUpdates = new Map<string, Attachment>();

  const listPager = new ConversationPager({
    fetchPage: (cursor) => chatApi.listConversations(cursor, undefined, get().selectedId),
    ...listFieldsAccess(get, (change) => set(change)),
    // Only what is still in the project (a frame may have moved one out meanwhile).
    belongs: (c) => c.projectId === get().selectedId,
  });

  const rememberUpdate = (file: Attachment) => {
    const known = earlyUpdates.get(file._id);
    earlyUpdates.delete(file._id);
    earlyUpdates.set(file._id, known ? newerFile(known, file) : file);
    if (earlyUpdates.size > EARLY_UPDATES_KEPT) earlyUpdates.delete(earlyUpdates.keys().next().value!);
  };

  /**
   * The server's list, each document the copy furthest along: a frame may have told more
   * than a list read before it (a fetch answered after the reading's end), and a document
   * never goes back from ready to being read.
   */
  const furthestAlong = (shown: readonly Attachment[] | undefined, files: readonly Attachment[]): Attachment[] =>
    files.map((file) => {
      const early = earlyUpdates.get(file._id);
      const current = shown?.find((f) => f._id === file._id);
      const known = early ? newerFile(file, early) : file;
      return current ? newerFile(current, known) : known;
    });

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
      files: { ...state.files, [projectId]: furthestAlong(state.files[projectId], files) },
      filesStatus: { ...state.filesStatus, [projectId]: 'ready' },
    }));

  const forgetProject = (id: string) => {
    for (const upload of get().uploads[id] ?? []) controllers.get(upload.localId)?.abort();
    // A page of its conversations on its way is of no use any more.
    if (get().selectedId === id) listPager.invalidate();
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


  return {
    set,
    get,
    listPager,
    projectsLoad: { request: 0, touched: new Set(), gone: new Set() },
    filesRequests: new Map(),
    controllers,
    queues: new Map(),
    earlyUpdates,
    rememberUpdate,
    patchUpload,
    dropUpload,
    hasUpload,
    setFiles,
    forgetProject,
  };
}
