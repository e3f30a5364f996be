/**
 * The projects' UI the chat's sidebar renders: the section and panel, and the dialogs.
 * Kept apart from index.ts, which the app loads at start-up, so they load with the chat page.
 */
export { ProjectPanel, ProjectSection } from './components/project-section';
export {
  DeleteProjectDialog,
  MoveConversationDialog,
  ProjectFormDialog,
  type ProjectFormMode,
} from './components/project-dialogs';
