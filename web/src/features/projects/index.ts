/**
 * The projects feature's public surface: its store (the chat's sidebar, composer and
 * conversation header read it) and the frames it applies (for the app's socket router).
 * Its section, panel and dialogs, which the chat's sidebar renders, are in ui.ts.
 */
export { projectOf, selectSelectedProject, useProjectStore, type ProjectStore } from './stores/projects';
export { projectFrames } from './stores/socket-frames';
