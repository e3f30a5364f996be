/**
 * The user's projects as pure functions: most recently changed first (`updatedAt`, then
 * `_id`, both descending, as `GET /api/projects` orders them), kept live by frames.
 */
import type { Project } from '@/types/generated';

/** Negative when `a` comes before `b`. */
export function compareProjects(a: Project, b: Project): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt ? -1 : 1;
  return a._id > b._id ? -1 : a._id < b._id ? 1 : 0;
}

/** A project created or changed (a frame, or the answer of this tab's own call). */
export function upsertProject(projects: readonly Project[], project: Project): Project[] {
  return [...projects.filter((p) => p._id !== project._id), project].sort(compareProjects);
}

export function removeProject(projects: readonly Project[], id: string): readonly Project[] {
  return projects.some((p) => p._id === id) ? projects.filter((p) => p._id !== id) : projects;
}

/**
 * A fresh list replaces the projects. What frames said while it was being fetched wins
 * over it: `touched` projects keep the tab's copy (created or changed meanwhile),
 * `deleted` ones stay out.
 */
export function replaceProjects(
  current: readonly Project[],
  fetched: readonly Project[],
  touched: ReadonlySet<string>,
  deleted: ReadonlySet<string>,
): Project[] {
  const byId = new Map<string, Project>();
  for (const project of fetched) if (!deleted.has(project._id)) byId.set(project._id, project);
  for (const project of current) {
    if (touched.has(project._id) && !deleted.has(project._id)) byId.set(project._id, project);
  }
  return [...byId.values()].sort(compareProjects);
}
