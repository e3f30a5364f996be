/**
 * A project's documents: uploaded one after another as the composer uploads one
 * (`POST /api/files`), then made the project's; an upload can be stopped, a refused one
 * forgotten, a document deleted.
 */
import { chatApi, isDocumentFile } from '@/features/chat';
import { errorMessage } from '@/lib/api-client';
import { randomId } from '@/lib/random-id';
import type { Attachment } from '@/types/generated';
import { projectsApi } from '../../api/projects-api';
import type { ProjectContext } from './context';
import type { ProjectUpload, ProjectUploadError } from './state';
import type { ProjectDocumentActions } from './types';

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

export function projectDocumentActions(ctx: ProjectContext): ProjectDocumentActions {
  const { set, controllers, queues, filesRequests, patchUpload, dropUpload, hasUpload, setFiles } = ctx;

  /** One document: uploaded as the composer uploads one, then made the project's. */
  const uploadOne = async (projectId: string, localId: string, file: File) => {
    if (!hasUpload(projectId, localId)) return;
    const controller = new AbortController();
    controllers.set(localId, controller);
    let uploaded: Attachment | null = null;
    try {
      uploaded = (await chatApi.uploadFile(file, file.name, controller.signal)).data;
      if (!hasUpload(projectId, localId)) {
        // Dismissed while its answer was on its way: nothing will use it.
        void chatApi.deleteFile(uploaded._id).catch(() => undefined);
        return;
      }
      const { data } = await projectsApi.addProjectFile(projectId, uploaded._id);
      // This list is newer than any fetched before it still on its way: that one is ignored.
      filesRequests.set(projectId, (filesRequests.get(projectId) ?? 0) + 1);
      setFiles(projectId, data.files);
      dropUpload(projectId, localId);
    } catch (error) {
      if (isAbort(error)) return;
      // Not the project's (full, refused, gone): the upload would only wait for the sweep.
      if (uploaded) void chatApi.deleteFile(uploaded._id).catch(() => undefined);
      if (hasUpload(projectId, localId)) {
        patchUpload(projectId, localId, { status: 'error', error: { kind: 'server', message: errorMessage(error) } });
      }
    } finally {
      controllers.delete(localId);
    }
  };

  return {
    addDocuments: (projectId, files, documentMaxMb) => {
      const picked = files.map((file) => {
        const error: ProjectUploadError | null = !isDocumentFile(file)
          ? { kind: 'unsupported' }
          : file.size > documentMaxMb * 1024 * 1024
            ? { kind: 'tooLarge', max: documentMaxMb }
            : null;
        const upload: ProjectUpload = {
          localId: randomId(),
          name: file.name || 'document',
          size: file.size,
          status: error ? 'error' : 'uploading',
          error,
        };
        return { file, upload };
      });
      if (picked.length === 0) return;
      set((state) => ({
        uploads: { ...state.uploads, [projectId]: [...(state.uploads[projectId] ?? []), ...picked.map((p) => p.upload)] },
      }));
      for (const { file, upload } of picked) {
        if (upload.status !== 'uploading') continue;
        const next = (queues.get(projectId) ?? Promise.resolve()).then(() => uploadOne(projectId, upload.localId, file));
        queues.set(projectId, next);
        void next.finally(() => {
          if (queues.get(projectId) === next) queues.delete(projectId);
        });
      }
    },

    dismissUpload: (projectId, localId) => {
      controllers.get(localId)?.abort();
      dropUpload(projectId, localId);
    },

    removeFile: async (projectId, fileId) => {
      await chatApi.deleteFile(fileId);
      // It leaves this tab's list now; the project's `project.updated` follows, and every
      // tab showing the project reads its documents again.
      set((state) => ({
        files: { ...state.files, [projectId]: (state.files[projectId] ?? []).filter((f) => f._id !== fileId) },
      }));
    },
  };
}
