/**
 * What the user does with projects: load them, pick the one the sidebar shows (its
 * conversations page through the chat's pager), create, change, delete, and move a
 * conversation into or out of one. A project's documents are in documents.ts.
 */
import { EMPTY_LIST, useChatStore } from '@/features/chat';
import { isApiError } from '@/lib/api-client';
import { projectsApi } from '../../api/projects-api';
import { replaceProjects, upsertProject } from '../project-list';
import type { ProjectContext } from './context';
import { initialState, omit } from './state';
import type { ProjectActions } from './types';

export function projectActions(ctx: ProjectContext): ProjectActions {
  const { set, get, listPager, projectsLoad, filesRequests, controllers, queues, earlyUpdates, setFiles, forgetProject } = ctx;
  return {
    reset: () => {
      controllers.forEach((controller) => controller.abort());
      controllers.clear();
      queues.clear();
      earlyUpdates.clear();
      projectsLoad.request += 1;
      listPager.reset();
      filesRequests.clear();
      projectsLoad.touched = new Set();
      projectsLoad.gone = new Set();
      set(initialState);
    },

    loadProjects: async () => {
      const request = ++projectsLoad.request;
      projectsLoad.touched = new Set();
      set((state) => ({ status: state.status === 'ready' ? 'ready' : 'loading' }));
      try {
        const { data } = await projectsApi.listProjects();
        if (request !== projectsLoad.request) return;
        set((state) => ({
          projects: replaceProjects(state.projects, data, projectsLoad.touched, projectsLoad.gone),
          status: 'ready',
        }));
        // The selected project is gone (deleted while this tab was away).
        const selected = get().selectedId;
        if (selected && !get().projects.some((p) => p._id === selected)) forgetProject(selected);
      } catch {
        if (request === projectsLoad.request) set((state) => ({ status: state.status === 'ready' ? 'ready' : 'error' }));
      }
    },

    select: (id) => {
      if (id === get().selectedId) return;
      listPager.invalidate();
      set({ selectedId: id, list: EMPTY_LIST, listStatus: id ? 'loading' : 'idle', loadingMore: false, loadMoreFailed: false });
      if (!id) return;
      void get().loadConversations();
      void get().loadFiles(id);
    },

    loadConversations: async () => {
      if (!get().selectedId) return;
      await listPager.loadFirst();
    },

    loadMoreConversations: async () => {
      if (!get().selectedId) return;
      await listPager.loadMore();
    },

    loadFiles: async (id) => {
      const request = (filesRequests.get(id) ?? 0) + 1;
      filesRequests.set(id, request);
      set((state) => ({
        filesStatus: { ...state.filesStatus, [id]: state.filesStatus[id] === 'ready' ? 'ready' : 'loading' },
      }));
      try {
        const { data } = await projectsApi.getProject(id);
        if (filesRequests.get(id) !== request) return;
        // The answer is the project too, as it now is.
        if (!projectsLoad.gone.has(id) && get().projects.some((p) => p._id === id)) {
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
      const { data } = await projectsApi.createProject({ name, ...(instructions ? { instructions } : {}) });
      get().onProjectUpdated({ project: data });
      return data;
    },

    update: async (id, input) => {
      const { data } = await projectsApi.updateProject(id, input);
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
        await projectsApi.deleteProject(id, deleteConversations);
      } catch (error) {
        set((state) => ({ deletedHere: omit(state.deletedHere, id) }));
        throw error;
      }
      get().onProjectDeleted({ projectId: id });
    },

    move: async (conversationId, projectId) => {
      const { data } = await projectsApi.moveConversation(conversationId, projectId);
      // The frames follow; this tab shows the move at once.
      useChatStore.getState().onConversationUpdated({ conversation: data });
      get().onConversationUpdated({ conversation: data });
    },
  };
}
