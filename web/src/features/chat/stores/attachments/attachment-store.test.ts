import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { i18n } from '@/lib/i18n';
import { jsonResponse } from '@/test/fixtures';
import type { Attachment } from '@/types/generated';
import type { ImageIo } from '../../lib/image-prep';
import { storedDocument, storedFile } from '@/test/chat-fixtures';
import { isBusy, sendable, setImageIo, useAttachmentStore, type AttachmentLimits } from '.';

const fetchMock = vi.fn<typeof fetch>();
const store = () => useAttachmentStore.getState();
const items = (key = 'k') => store().items[key] ?? [];
const FREE: AttachmentLimits = { max: 1, maxBytes: 10 * 1024 * 1024, maxDocuments: 0, documentMaxMb: 0 };
const PRO: AttachmentLimits = { max: 5, maxBytes: 10 * 1024 * 1024, maxDocuments: 0, documentMaxMb: 50 };
const png = (name = 'cat.png') => new File([new Uint8Array(64)], name, { type: 'image/png' });

/** The browser's decoder, for jsdom: every image is 640 × 480 and encodes to 100 bytes. */
const io: ImageIo = {
  decode: () => Promise.resolve({ width: 640, height: 480, close: () => undefined }),
  encode: (_image, _size, type) => Promise.resolve(new Blob([new Uint8Array(100)], { type })),
  convertHeic: () => Promise.reject(new Error('not a HEIC file')),
};

let uploads = 0;
/** POST /api/files answers the next file (f1, f2, …) unless a test says otherwise. */
function serveUploads(answer?: (name: string) => Response | Promise<Response>) {
  fetchMock.mockImplementation(async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url === '/api/files' && init?.method === 'POST') {
      const part = (init.body as FormData).get('file') as File;
      if (answer) return answer(part.name);
      uploads += 1;
      return jsonResponse(201, { success: true, data: storedFile({ _id: `f${uploads}`, name: part.name }) });
    }
    if (url.startsWith('/api/files/') && init?.method === 'DELETE') return jsonResponse(200, { success: true });
    return jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' });
  });
}

const calls = (method: string) =>
  fetchMock.mock.calls.filter(([, init]) => init?.method === method).map(([input]) => input as string);

beforeEach(async () => {
  await i18n.changeLanguage('en-US');
  uploads = 0;
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockReset();
  serveUploads();
  let next = 0;
  URL.createObjectURL = vi.fn(() => `blob:preview-${(next += 1)}`);
  URL.revokeObjectURL = vi.fn();
  setImageIo(io);
  store().reset();
});

afterEach(() => {
  setImageIo(null);
});

describe('the composer’s images', () => {
  it('are uploaded as soon as they are picked, as the part `file`, with a preview meanwhile', async () => {
    store().add('k', [png()], FREE);
    expect(items()).toMatchObject([{ name: 'cat.png', status: 'preparing', previewUrl: 'blob:preview-1', file: null }]);
    expect(isBusy(items()[0]!)).toBe(true);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('ready'));
    expect(items()[0]!.file?._id).toBe('f1');
    expect(calls('POST')).toEqual(['/api/files']);
    const body = fetchMock.mock.calls[0]![1]!.body as FormData;
    expect((body.get('file') as File).name).toBe('cat.png');
    expect(sendable(items())).toEqual([{ file: items()[0]!.file, previewUrl: 'blob:preview-1' }]);
  });

  it('stop at the plan’s maxImagesPerMessage, refusing the extra ones with {max}', async () => {
    store().add('k', [png('a.png'), png('b.png')], FREE);
    expect(items().map((i) => i.name)).toEqual(['a.png']);
    expect(store().refusals.k).toEqual({ kind: 'tooMany', max: 1 });
    await vi.waitFor(() => expect(items()[0]!.status).toBe('ready'));
    store().add('k', [png('c.png')], FREE);
    expect(items()).toHaveLength(1);
    expect(calls('POST')).toHaveLength(1);

    store().add('k', [png('c.png'), png('d.png')], PRO);
    expect(items().map((i) => i.name)).toEqual(['a.png', 'c.png', 'd.png']);
    expect(store().refusals.k).toBeUndefined();
  });

  it('count apart per conversation', () => {
    store().add('k', [png()], FREE);
    store().add('other', [png()], FREE);
    expect(items('k')).toHaveLength(1);
    expect(items('other')).toHaveLength(1);
  });

  it('take no other files', () => {
    store().add('k', [new File(['%PDF'], 'a.pdf', { type: 'application/pdf' })], PRO);
    expect(items()).toEqual([]);
    expect(store().refusals.k).toEqual({ kind: 'unsupported', documents: false });
    store().dismissRefusal('k');
    expect(store().refusals.k).toBeUndefined();
  });

  it('show the server’s message when it refuses one, and a failed one leaves room', async () => {
    serveUploads(() =>
      jsonResponse(413, { success: false, code: 'storage_full', message: 'Your file storage is full' }),
    );
    store().add('k', [png()], FREE);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('error'));
    expect(items()[0]!.error).toEqual({ kind: 'upload', message: 'Your file storage is full' });
    expect(sendable(items())).toEqual([]);

    serveUploads();
    store().add('k', [png('second.png')], FREE);
    expect(items().map((i) => i.status)).toEqual(['error', 'preparing']);
  });

  it('say "File upload error" when the server gives no message', async () => {
    serveUploads(() => new Response('', { status: 400 }));
    store().add('k', [png()], FREE);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('error'));
    expect(items()[0]!.error).toEqual({ kind: 'upload', message: null });
  });

  it('are tried again while the server is busy (429 server_busy, Retry-After)', async () => {
    // vi.waitFor moves fake timers on by itself; the fake clock tells how long it waited.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      const answeredAt: number[] = [];
      serveUploads(() => {
        answeredAt.push(Date.now());
        return answeredAt.length === 1
          ? new Response(JSON.stringify({ success: false, code: 'server_busy', message: 'Busy' }), {
              status: 429,
              headers: { 'Content-Type': 'application/json', 'Retry-After': '2' },
            })
          : jsonResponse(201, { success: true, data: storedFile() });
      });
      store().add('k', [png()], FREE);
      await vi.waitFor(() => expect(items()[0]!.status).toBe('ready'), { timeout: 5000, interval: 100 });
      expect(answeredAt).toHaveLength(2);
      expect(answeredAt[1]! - answeredAt[0]!).toBeGreaterThanOrEqual(2000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('say "HEIC image conversion error" when a HEIC cannot be converted, and show no preview', async () => {
    store().add('k', [new File([new Uint8Array(8)], 'IMG_1.HEIC')], FREE);
    expect(items()[0]!.previewUrl).toBeNull();
    await vi.waitFor(() => expect(items()[0]!.status).toBe('error'));
    expect(items()[0]!.error).toEqual({ kind: 'heic' });
    expect(calls('POST')).toEqual([]);
  });

  it('show a converted HEIC by its JPEG, under its new name', async () => {
    setImageIo({ ...io, convertHeic: () => Promise.resolve(new Blob([new Uint8Array(10)], { type: 'image/jpeg' })) });
    store().add('k', [new File([new Uint8Array(8)], 'IMG_1.HEIC', { type: 'image/heic' })], FREE);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('ready'));
    expect(items()[0]).toMatchObject({ name: 'IMG_1.jpg', previewUrl: 'blob:preview-1', file: { name: 'IMG_1.jpg' } });
  });

  it('say "Image optimization failed" when a large image cannot be made small enough', async () => {
    setImageIo({ ...io, encode: () => Promise.reject(new Error('canvas')) });
    store().add('k', [new File([new Uint8Array(64)], 'a.gif', { type: 'image/gif' })], FREE);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('error'));
    expect(items()[0]!.error).toEqual({ kind: 'optimize' });
  });

  it('when removed, delete the uploaded file and free the preview', async () => {
    store().add('k', [png()], FREE);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('ready'));
    store().remove('k', items()[0]!.localId);
    expect(items()).toEqual([]);
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:preview-1');
    expect(calls('DELETE')).toEqual(['/api/files/f1']);
  });

  it('when removed while uploading, stop the upload; a file that arrived anyway is deleted', async () => {
    let release!: () => void;
    serveUploads(
      () =>
        new Promise<Response>((resolve) => {
          release = () => resolve(jsonResponse(201, { success: true, data: storedFile({ _id: 'late' }) }));
        }),
    );
    store().add('k', [png()], FREE);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('uploading'));
    const signal = fetchMock.mock.calls[0]![1]!.signal!;
    store().remove('k', items()[0]!.localId);
    expect(signal.aborted).toBe(true);
    // The mock ignores the abort, as a server that already stored it would.
    release();
    await vi.waitFor(() => expect(calls('DELETE')).toEqual(['/api/files/late']));
    expect(items()).toEqual([]);
  });

  it('go with their deleted conversation, uploaded ones deleted on the server too', async () => {
    store().add('k', [png()], FREE);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('ready'));
    store().discard('k');
    expect(items()).toEqual([]);
    expect(calls('DELETE')).toEqual(['/api/files/f1']);
  });

  it('go with a send (the previews live on in the pending message) and come back when it is refused', async () => {
    store().add('k', [png('a.png'), png('b.png')], PRO);
    await vi.waitFor(() => expect(items().every((i) => i.status === 'ready')).toBe(true));
    const sent = sendable(items());
    store().handOver('k');
    expect(items()).toEqual([]);
    expect(URL.revokeObjectURL).not.toHaveBeenCalled();

    store().restore('k', sent);
    expect(items().map((i) => [i.name, i.status, i.file?._id, i.previewUrl])).toEqual([
      ['a.png', 'ready', 'f1', 'blob:preview-1'],
      ['b.png', 'ready', 'f2', 'blob:preview-2'],
    ]);
    // The composer has new ones meanwhile: the refused ones are not piled on top.
    store().handOver('k');
    store().add('k', [png('c.png')], PRO);
    store().restore('k', sent);
    expect(items().map((i) => i.name)).toEqual(['c.png']);
    expect(URL.revokeObjectURL).toHaveBeenCalledWith('blob:preview-1');
  });
});

describe('the composer’s documents', () => {
  /** A plan with document processing, on a server that takes documents. */
  const PLUS: AttachmentLimits = { max: 3, maxBytes: 10 * 1024 * 1024, maxDocuments: 10, documentMaxMb: 20 };
  const doc = (name = 'report.pdf', bytes = 64) => new File([new Uint8Array(bytes)], name, { type: '' });
  const frame = (overrides: Parameters<typeof storedDocument>[0]) => store().onFileUpdated(storedDocument(overrides));

  /** POST /api/files answers each document as processing (d1, d2, …); `hold` keeps the answers back. */
  function serveDocuments({ hold = false } = {}) {
    const held: (() => void)[] = [];
    let count = 0;
    serveUploads((name) => {
      count += 1;
      // Named d1, d2, … in the order picked when the names say so (uploads start together).
      const id = /^d\d+$/.test(name.replace(/\.\w+$/, '')) ? name.replace(/\.\w+$/, '') : `d${count}`;
      const answer = () => jsonResponse(201, { success: true, data: storedDocument({ _id: id, name }) });
      if (!hold) return answer();
      return new Promise<Response>((resolve) => held.push(() => resolve(answer())));
    });
    return { release: () => held.splice(0).forEach((go) => go()) };
  }

  it('go up as they were picked, then wait while the server reads them, showing its progress', async () => {
    serveDocuments();
    store().add('k', [doc()], PLUS);
    expect(items()).toMatchObject([{ kind: 'document', name: 'report.pdf', status: 'uploading', previewUrl: null, size: 64 }]);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('processing'));
    expect(items()[0]!.file).toMatchObject({ _id: 'd1', progress: 0 });
    // Not sent while being read: the server would refuse it (file_processing).
    expect(isBusy(items()[0]!)).toBe(true);
    expect(sendable(items())).toEqual([]);

    frame({ progress: 40 });
    expect(items()[0]).toMatchObject({ status: 'processing', file: { progress: 40 } });
    frame({ status: 'ready', progress: 100 });
    expect(items()[0]).toMatchObject({ status: 'ready', error: null, file: { status: 'ready', progress: 100 } });
    expect(isBusy(items()[0]!)).toBe(false);
    expect(sendable(items()).map((a) => a.file._id)).toEqual(['d1']);
    // The part is the file itself, under its name.
    const body = fetchMock.mock.calls[0]![1]!.body as FormData;
    expect((body.get('file') as File).name).toBe('report.pdf');
  });

  it('keep the latest state when frames come before the upload’s answer', async () => {
    const server = serveDocuments({ hold: true });
    store().add('k', [doc('d1.md'), doc('d2.md')], PLUS);
    await vi.waitFor(() => expect(calls('POST')).toHaveLength(2));
    // Read already: the end arrives first, for d1; d2 got as far as 60.
    frame({ _id: 'd1', status: 'ready', progress: 100 });
    frame({ _id: 'd2', progress: 30 });
    frame({ _id: 'd2', progress: 60 });
    expect(items().map((i) => i.status)).toEqual(['uploading', 'uploading']);
    server.release();
    await vi.waitFor(() => expect(items().every((i) => i.file)).toBe(true));
    expect(items().map((i) => [i.file?._id, i.status, i.file?.progress])).toEqual([
      ['d1', 'ready', 100],
      ['d2', 'processing', 60],
    ]);
  });

  it('ignore a late progress after the end, and frames about files they do not hold', async () => {
    serveDocuments();
    store().add('k', [doc()], PLUS);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('processing'));
    frame({ status: 'ready', progress: 100 });
    const before = store().items;
    frame({ progress: 80 });
    frame({ _id: 'another-tabs-file', progress: 50 });
    expect(store().items).toBe(before);
    expect(items()[0]!.status).toBe('ready');
  });

  it('say "The document could not be read" when reading fails, leave room, and are deleted at the send', async () => {
    serveDocuments();
    store().add('k', [doc()], { ...PLUS, maxDocuments: 1 });
    await vi.waitFor(() => expect(items()[0]!.status).toBe('processing'));
    frame({ status: 'failed', progress: 35 });
    expect(items()[0]).toMatchObject({ status: 'error', error: { kind: 'unreadable' } });
    expect(isBusy(items()[0]!)).toBe(false);
    expect(sendable(items())).toEqual([]);

    store().add('k', [doc('d2.pdf')], { ...PLUS, maxDocuments: 1 });
    expect(items().map((i) => i.name)).toEqual(['report.pdf', 'd2.pdf']);
    await vi.waitFor(() => expect(items()[1]!.status).toBe('processing'));
    frame({ _id: 'd2', status: 'ready', progress: 100 });
    store().handOver('k');
    expect(calls('DELETE')).toEqual(['/api/files/d1']);
  });

  it('stop at 10 a message, beside the images, in the order picked', () => {
    serveDocuments();
    const docs = Array.from({ length: 11 }, (_, i) => doc(`d${i}.txt`));
    store().add('k', [png('a.png'), ...docs], PLUS);
    expect(items().filter((i) => i.kind === 'document')).toHaveLength(10);
    expect(items()[0]).toMatchObject({ kind: 'image', name: 'a.png' });
    expect(store().refusals.k).toEqual({ kind: 'tooManyDocuments', max: 10 });
  });

  it('are not taken on a plan without documents, and other files name what can be attached', () => {
    store().add('k', [doc()], FREE);
    expect(items()).toEqual([]);
    expect(store().refusals.k).toEqual({ kind: 'unsupported', documents: false });
    store().add('k', [new File(['x'], 'movie.mp4', { type: 'video/mp4' })], PLUS);
    expect(store().refusals.k).toEqual({ kind: 'unsupported', documents: true });
  });

  it('larger than the plan’s documentMaxMb are refused before uploading', () => {
    store().add('k', [doc('big.pdf', 3 * 1024 * 1024)], { ...PLUS, documentMaxMb: 2 });
    expect(items()[0]).toMatchObject({ status: 'error', error: { kind: 'tooLarge', max: 2 } });
    expect(calls('POST')).toEqual([]);
  });

  it('show the server’s refusal (a plan without documents, an unreadable file)', async () => {
    serveUploads(() =>
      jsonResponse(403, { success: false, code: 'premium_required', message: 'Document upload is a premium feature', field: 'documentUpload' }),
    );
    store().add('k', [doc()], PLUS);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('error'));
    expect(items()[0]!.error).toEqual({ kind: 'upload', message: 'Document upload is a premium feature' });
  });

  describe('after a reconnect', () => {
    /** GET /api/files/{id}/info answers by `answer`; everything else as before. */
    function serveInfo(answer: (id: string) => Response | Promise<Response>) {
      const before = fetchMock.getMockImplementation()!;
      fetchMock.mockImplementation((input, init) => {
        const info = /^\/api\/files\/([^/]+)\/info$/.exec(input as string);
        return info && init?.method === 'GET' ? Promise.resolve(answer(info[1]!)) : before(input, init);
      });
    }
    const infoOf = (file: Attachment) => jsonResponse(200, { success: true, data: file });

    it('ask once for each uploaded document still being read, in every composer, and take its state', async () => {
      // Images are answered as images, documents by their names (d1, d2, …); slow.pdf is never answered.
      serveUploads((name) =>
        name === 'slow.pdf'
          ? new Promise<Response>(() => undefined)
          : jsonResponse(201, {
              success: true,
              data: name.endsWith('.png') ? storedFile({ _id: 'img', name }) : storedDocument({ _id: name.replace(/\.\w+$/, ''), name }),
            }),
      );
      store().add('k', [png('a.png'), doc('d1.pdf'), doc('d2.pdf'), doc('slow.pdf')], PLUS);
      store().add('other', [doc('d3.pdf')], PLUS);
      await vi.waitFor(() => expect(items().map((i) => i.status)).toEqual(['ready', 'processing', 'processing', 'uploading']));
      await vi.waitFor(() => expect(items('other')[0]!.status).toBe('processing'));
      frame({ _id: 'd2', status: 'ready', progress: 100 });
      serveInfo((id) =>
        infoOf(id === 'd1' ? storedDocument({ _id: 'd1', status: 'ready', progress: 100, pages: 3 }) : storedDocument({ _id: id, progress: 70 })),
      );

      await store().refreshProcessing();
      // Not the image, nor the document already read, nor the one still going up.
      expect(calls('GET')).toEqual(['/api/files/d1/info', '/api/files/d3/info']);
      expect(items().map((i) => i.status)).toEqual(['ready', 'ready', 'ready', 'uploading']);
      expect(items()[1]!.file).toMatchObject({ _id: 'd1', pages: 3 });
      expect(sendable(items()).map((a) => a.file._id)).toEqual(['img', 'd1', 'd2']);
      expect(items('other')[0]).toMatchObject({ status: 'processing', file: { progress: 70 } });
    });

    it('keep a frame further along than the answer', async () => {
      serveDocuments();
      store().add('k', [doc()], PLUS);
      await vi.waitFor(() => expect(items()[0]!.status).toBe('processing'));
      let answer!: () => void;
      serveInfo(() => new Promise<Response>((resolve) => (answer = () => resolve(infoOf(storedDocument({ progress: 60 }))))));
      const refreshed = store().refreshProcessing();
      await vi.waitFor(() => expect(calls('GET')).toHaveLength(1));
      frame({ status: 'ready', progress: 100 });
      answer();
      await refreshed;
      expect(items()[0]).toMatchObject({ status: 'ready', file: { status: 'ready', progress: 100 } });
    });

    it('say "The document could not be read" of one that is gone (404), which can then be removed', async () => {
      serveDocuments();
      store().add('k', [doc()], PLUS);
      await vi.waitFor(() => expect(items()[0]!.status).toBe('processing'));
      serveInfo(() => jsonResponse(404, { success: false, code: 'not_found', message: 'Not found' }));
      await store().refreshProcessing();
      expect(items()[0]).toMatchObject({ status: 'error', error: { kind: 'unreadable' }, file: { status: 'failed' } });
      expect(isBusy(items()[0]!)).toBe(false);
      expect(sendable(items())).toEqual([]);
      store().remove('k', items()[0]!.localId);
      expect(items()).toEqual([]);
    });

    it('leave a document as it is when the server cannot answer, and ask for nothing when none is being read', async () => {
      await store().refreshProcessing();
      expect(fetchMock).not.toHaveBeenCalled();

      serveDocuments();
      store().add('k', [doc()], PLUS);
      await vi.waitFor(() => expect(items()[0]!.status).toBe('processing'));
      serveInfo(() => jsonResponse(503, { success: false, code: 'service_unavailable', message: 'Unavailable' }));
      await store().refreshProcessing();
      expect(items()[0]).toMatchObject({ status: 'processing', error: null });
    });
  });

  it('come back as they were when a send is refused', async () => {
    serveDocuments();
    store().add('k', [doc()], PLUS);
    await vi.waitFor(() => expect(items()[0]!.status).toBe('processing'));
    frame({ status: 'ready', progress: 100, pages: 3 });
    const sent = sendable(items());
    store().handOver('k');
    store().restore('k', sent);
    expect(items()).toMatchObject([{ kind: 'document', name: 'report.pdf', status: 'ready', file: { _id: 'd1', pages: 3 } }]);
  });
});
