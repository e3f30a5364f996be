/**
 * The frames the projects apply, for the app's socket router (stores/projects/frames.ts):
 * a project changed or deleted, the conversation frames that change the selected
 * project's list, a document's reading, and a reconnect.
 */
import type { SliceFrames } from '@/lib/socket-protocol';
import { useProjectStore } from './projects';

const projects = () => useProjectStore.getState();

export type ProjectFrameType =
  | 'ready'
  | 'project.updated'
  | 'project.deleted'
  | 'conversation.created'
  | 'conversation.updated'
  | 'conversation.deleted'
  | 'message.created'
  | 'file.updated';

export const projectFrames: SliceFrames<ProjectFrameType> = {
  ready: (_frame, { reconnect }) => {
    if (reconnect) {
      projects().onReady();
      return;
    }
    // The first connection: a document uploaded before it was ready (a slow connect) had
    // its reading's frames go to no tab of ours, so a project shown with one still being
    // read reads its documents once.
    const { selectedId, files } = projects();
    if (selectedId && files[selectedId]?.some((f) => f.status === 'processing')) void projects().loadFiles(selectedId);
  },
  'project.updated': (frame) => projects().onProjectUpdated(frame),
  'project.deleted': (frame) => projects().onProjectDeleted(frame),
  'conversation.created': (frame) => projects().onConversationCreated(frame),
  'conversation.updated': (frame) => projects().onConversationUpdated(frame),
  'conversation.deleted': (frame) => projects().onConversationDeleted(frame),
  'message.created': (frame) => projects().onMessageCreated(frame),
  'file.updated': ({ file }) => projects().onFileUpdated(file),
};
