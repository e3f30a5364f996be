/**
 * The socket frames the projects apply (routed here by the app's socket router), in every
 * tab: a project changed or deleted, the conversation frames that change the selected
 * project's list, a document's reading progress; and after a reconnect, what is shown is
 * fetched again.
 */
import { newerFile, removeConversation, touchConversation, upsertConversation } from '@/features/chat';
import { upsertProject } from '../project-list';
import type { ProjectContext } from './context';
import type { ProjectFrameHandlers } from './types';

export function projectFrameHandlers(ctx: ProjectContext): ProjectFrameHandlers {
  const { set, get, listPager, projectsLoad, rememberUpdate, forgetProject } = ctx;
  return {
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
      if (projectsLoad.gone.has(project._id)) return;
      projectsLoad.touched.add(project._id);
      set((state) => ({ projects: upsertProject(state.projects, project) }));
      // Its documents may have changed (one added or deleted, here or in another tab):
      // the frame does not carry them, so the project shown reads them again.
      if (get().selectedId === project._id) void get().loadFiles(project._id);
    },

    onProjectDeleted: ({ projectId }) => {
      projectsLoad.gone.add(projectId);
      projectsLoad.touched.delete(projectId);
      forgetProject(projectId);
    },

    onConversationCreated: ({ conversation }) => {
      if (!conversation.projectId || conversation.projectId !== get().selectedId) return;
      listPager.noteTouched(conversation._id);
      set((state) => ({ list: upsertConversation(state.list, conversation) }));
    },

    onConversationUpdated: ({ conversation }) => {
      const selected = get().selectedId;
      if (!selected) return;
      // An archived conversation leaves the project's list as it leaves the main one.
      if (conversation.projectId === selected && !conversation.archived) {
        listPager.noteTouched(conversation._id);
        listPager.noteRestored(conversation._id);
        set((state) => ({ list: upsertConversation(state.list, conversation) }));
      } else if (get().list.items.some((c) => c._id === conversation._id) || get().listStatus === 'loading') {
        // Moved out, archived (or its project deleted): a page being fetched may still hold it.
        listPager.noteDeleted(conversation._id);
        set((state) => ({ list: removeConversation(state.list, conversation._id) }));
      }
    },

    onConversationDeleted: ({ conversationId }) => {
      listPager.noteDeleted(conversationId);
      set((state) => ({ list: removeConversation(state.list, conversationId) }));
    },

    onMessageCreated: ({ conversationId, message }) => {
      const { list } = get();
      if (!list.items.some((c) => c._id === conversationId)) return;
      listPager.noteTouched(conversationId);
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
}
