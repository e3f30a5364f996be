/**
 * One way in for files, whether picked, dropped or pasted: images and documents go to the
 * composer within the plan's limits; documents the plan (or the server) does not take get
 * the notice the menu's "Document" would give, as does any file while nothing can be
 * attached at all.
 */
import type { Plan } from '@/types/generated';
import { isDocument } from '../lib/files';
import { attachButtonGate, attachmentLimits, documentGate, documentNotice, type GateNoticeKind } from '../lib/gating';
import { classifyImage } from '../lib/image-prep';
import { useAttachmentStore } from './attachments';

/** A file that goes up as a document (an image's name or type wins: it goes up as an image). */
export function isDocumentFile(file: File): boolean {
  return classifyImage(file) === 'unsupported' && isDocument(file);
}

/** Whether a file is something the composer attaches at all (for a paste: else it is left to the text box). */
export function isAttachable(file: File): boolean {
  return classifyImage(file) !== 'unsupported' || isDocument(file);
}

/** Adds `files` to the composer `key`; returns the notice to show, if any. */
export function attachFiles(key: string, files: readonly File[], plan: Plan | null): GateNoticeKind | null {
  if (files.length === 0) return null;
  if (attachButtonGate(plan) !== 'menu') return documentNotice(plan);
  const documentsTaken = documentGate(plan) === 'available';
  const refused = documentsTaken ? [] : files.filter(isDocumentFile);
  const taken = files.filter((file) => !refused.includes(file));
  if (taken.length > 0) useAttachmentStore.getState().add(key, taken, attachmentLimits(plan));
  return refused.length > 0 ? documentNotice(plan) : null;
}
