/**
 * The composer's files: one zustand store, its state (state.ts), the store's type and its
 * parts' interfaces (types.ts), the composer's actions (actions.ts) and the uploads they
 * start (uploads.ts), the frames it applies (frames.ts, routed by the app's socket router)
 * and its selectors (selectors.ts).
 */
import { create } from 'zustand';
import { attachmentActions } from './actions';
import { createAttachmentContext } from './context';
import { attachmentFrameHandlers } from './frames';
import { initialState } from './state';
import type { AttachmentState } from './types';

export const useAttachmentStore = create<AttachmentState>()((set, get) => {
  const ctx = createAttachmentContext(set, get);
  return { ...initialState, ...attachmentActions(ctx), ...attachmentFrameHandlers(ctx) };
});

export type { AttachmentActions, AttachmentFrameHandlers, AttachmentState } from './types';
export {
  releaseSent,
  type AttachmentError,
  type AttachmentLimits,
  type AttachmentRefusal,
  type AttachmentStatus,
  type ComposerAttachment,
  type SentAttachment,
} from './state';
export { BUSY_RETRIES, setImageIo } from './uploads';
export { isBusy, selectAttachments, sendable } from './selectors';
