/**
 * The projects slice: one zustand store, its state (state.ts), the store's type and its
 * parts' interfaces (types.ts), the user's actions (actions.ts) and a project's documents
 * (documents.ts), the frames it applies (frames.ts, routed by the app's socket router)
 * and its selectors (selectors.ts).
 */
import { create } from 'zustand';
import { projectActions } from './actions';
import { createProjectContext } from './context';
import { projectDocumentActions } from './documents';
import { projectFrameHandlers } from './frames';
import { initialState } from './state';
import type { ProjectStore } from './types';

export const useProjectStore = create<ProjectStore>()((set, get) => {
  const ctx = createProjectContext(set, get);
  return { ...initialState, ...projectActions(ctx), ...projectDocumentActions(ctx), ...projectFrameHandlers(ctx) };
});

export type { ProjectActions, ProjectDocumentActions, ProjectFrameHandlers, ProjectStore } from './types';
export type { ProjectState, ProjectUpload, ProjectUploadError } from './state';
export { projectOf, selectSelectedProject } from './selectors';
