/** How components read the projects' state. */
import type { Conversation, Project } from '@/types/generated';
import type { ProjectStore } from './types';

/** The project a conversation is in, as this tab knows it; null when none or unknown. */
export function projectOf(projects: readonly Project[], conversation: Pick<Conversation, 'projectId'> | null | undefined): Project | null {
  const id = conversation?.projectId;
  return id ? (projects.find((p) => p._id === id) ?? null) : null;
}

/** The project the sidebar shows; null when none (or not loaded). */
export function selectSelectedProject(s: ProjectStore): Project | null {
  return s.selectedId ? (s.projects.find((p) => p._id === s.selectedId) ?? null) : null;
}
