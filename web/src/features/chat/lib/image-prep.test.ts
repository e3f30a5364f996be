import { describe, expect, it, vi } from 'vitest';
import { classifyImage, fitWithin, ImagePrepError, MAX_EDGE, prepareImage, renamed, type ImageIo } from './image-prep';

interface FakeImage {
  width: number;
  height: number;
  close: () => void;
}

/** Decodes to the given size; encodes to `bytes(size, type, quality)` bytes. */
function fakeIo(
  size: { width: number; height: number } | Error,
  bytes: (size: { width: number; height: number }, type: string, quality?: number) => number = () => 1000,
) {
  const io = {
    closed: 0,
    decode: vi.fn(
      (_blob: Blob): Promise<FakeImage> =>
        size instanceof Error ? Promise.reject(size) : Promise.resolve({ ...size, close: () => (io.closed += 1) }),
    ),
    encode: vi.fn((_image: FakeImage, target: { width: number; height: number }, type: string, quality?: number) =>
      Promise.resolve(new Blob([new Uint8Array(bytes(target, type, quality))], { type })),
    ),
    convertHeic: vi.fn((_blob: Blob) => Promise.resolve(new Blob([new Uint8Array(500)], { type: 'image/jpeg' }))),
  };
  io satisfies ImageIo<FakeImage>;
  return io;
}

const file = (name: string, type: string, bytes = 1000) => new File([new Uint8Array(bytes)], name, { type });
const MB = 1024 * 1024;

describe('classifyImage', () => {
  it('sends JPEG, PNG and WebP as they are', () => {
    expect(classifyImage(file('a.jpg', 'image/jpeg'))).toBe('direct');
    expect(classifyImage(file('a.png', 'image/png'))).toBe('direct');
    expect(classifyImage(file('a.webp', 'image/webp'))).toBe('direct');
    expect(classifyImage(file('a.JPEG', ''))).toBe('direct');
  });

  it('converts HEIC and HEIF, recognised by type or, without one, by name', () => {
    expect(classifyImage(file('IMG_1.HEIC', ''))).toBe('heic');
    expect(classifyImage(file('x', 'image/heif'))).toBe('heic');
    expect(classifyImage(file('a.heic', 'application/octet-stream'))).toBe('heic');
  });

  it('re-encodes other images, refuses SVG and anything else', () => {
    expect(classifyImage(file('a.gif', 'image/gif'))).toBe('reencode');
    expect(classifyImage(file('a.avif', ''))).toBe('reencode');
    expect(classifyImage(file('a.svg', 'image/svg+xml'))).toBe('unsupported');
    expect(classifyImage(file('a.pdf', 'application/pdf'))).toBe('unsupported');
    expect(classifyImage(file('notes', ''))).toBe('unsupported');
  });
});

describe('sizes and names', () => {
  it('fits the long edge, keeping the shape', () => {
    expect(fitWithin(4032, 3024, 2048)).toEqual({ width: 2048, height: 1536 });
    expect(fitWithin(3024, 4032, 2048)).toEqual({ width: 1536, height: 2048 });
    expect(fitWithin(640, 480, 2048)).toEqual({ width: 640, height: 480 });
    expect(fitWithin(10000, 1, 256)).toEqual({ width: 256, height: 1 });
  });

  it('swaps the extension', () => {
    expect(renamed('IMG_1.HEIC', 'jpg')).toBe('IMG_1.jpg');
    expect(renamed('photo', 'jpg')).toBe('photo.jpg');
    expect(renamed('.hidden', 'png')).toBe('.hidden.png');
  });
});

describe('prepareImage', () => {
  it('passes a small JPEG on untouched', async () => {
    const io = fakeIo({ width: 800, height: 600 });
    const picked = file('cat.jpg', 'image/jpeg');
    const prepared = await prepareImage(picked, 10 * MB, io);
    expect(prepared).toEqual({ blob: picked, name: 'cat.jpg', changed: false });
    expect(io.encode).not.toHaveBeenCalled();
    expect(io.closed).toBe(1);
  });

  it(`scales a photo over ${MAX_EDGE} px down to a JPEG`, async () => {
    const io = fakeIo({ width: 4000, height: 3000 });
    const prepared = await prepareImage(file('big.jpg', 'image/jpeg'), 10 * MB, io);
    expect(io.encode).toHaveBeenCalledWith(expect.anything(), { width: 2048, height: 1536 }, 'image/jpeg', 0.88);
    expect(prepared.name).toBe('big.jpg');
    expect(prepared.changed).toBe(true);
  });

  it('keeps a large screenshot PNG while it fits, else makes it a JPEG', async () => {
    const fits = fakeIo({ width: 3000, height: 2000 });
    expect((await prepareImage(file('s.png', 'image/png'), 10 * MB, fits)).blob.type).toBe('image/png');
    const heavy = fakeIo({ width: 3000, height: 2000 }, (_size, type) => (type === 'image/png' ? 11 * MB : 1000));
    const prepared = await prepareImage(file('s.png', 'image/png'), 10 * MB, heavy);
    expect(prepared.blob.type).toBe('image/jpeg');
    expect(prepared.name).toBe('s.jpg');
  });

  it('lowers the quality, then the size, until the file fits the plan’s limit', async () => {
    const io = fakeIo({ width: 2000, height: 1000 }, ({ width }, _type, quality) => (width < 2000 && quality === 0.8 ? 900 : 5000));
    const picked = file('noisy.jpg', 'image/jpeg', 3000);
    const prepared = await prepareImage(picked, 2000, io);
    expect(prepared.blob.size).toBe(900);
    const sizes = io.encode.mock.calls.map(([, size, , quality]) => `${size.width}@${quality}`);
    expect(sizes).toEqual(['2000@0.88', '2000@0.8', '2000@0.7', '2000@0.6', '1500@0.88', '1500@0.8']);
  });

  it('fails with "Image optimization failed" when nothing fits', async () => {
    const io = fakeIo({ width: 3000, height: 3000 }, () => 5000);
    await expect(prepareImage(file('huge.jpg', 'image/jpeg', 3000), 1000, io)).rejects.toMatchObject({
      reason: 'optimize',
    });
    expect(io.closed).toBe(1);
  });

  it('converts HEIC to JPEG, then treats it as any photo', async () => {
    const io = fakeIo({ width: 4032, height: 3024 });
    const prepared = await prepareImage(file('IMG_0001.HEIC', ''), 10 * MB, io);
    expect(io.convertHeic).toHaveBeenCalledOnce();
    expect(io.encode).toHaveBeenCalledWith(expect.anything(), { width: 2048, height: 1536 }, 'image/jpeg', 0.88);
    expect(prepared.name).toBe('IMG_0001.jpg');
  });

  it('fails with "HEIC image conversion error" when the converter does', async () => {
    const io = fakeIo({ width: 1, height: 1 });
    io.convertHeic.mockRejectedValueOnce(new Error('ERR_LIBHEIF format not supported'));
    const error: unknown = await prepareImage(file('broken.heic', 'image/heic'), 10 * MB, io).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImagePrepError);
    expect((error as ImagePrepError).reason).toBe('heic');
  });

  it('lets the server judge a small file the browser cannot read, but not one to re-encode', async () => {
    const picked = file('odd.jpg', 'image/jpeg');
    expect((await prepareImage(picked, 10 * MB, fakeIo(new Error('decode')))).blob).toBe(picked);
    await expect(prepareImage(file('odd.gif', 'image/gif'), 10 * MB, fakeIo(new Error('decode')))).rejects.toMatchObject({
      reason: 'optimize',
    });
    await expect(
      prepareImage(file('odd.jpg', 'image/jpeg', 2 * MB), MB, fakeIo(new Error('decode'))),
    ).rejects.toMatchObject({ reason: 'optimize' });
  });

  it('re-encodes a GIF to JPEG even when small', async () => {
    const prepared = await prepareImage(file('a.gif', 'image/gif'), 10 * MB, fakeIo({ width: 10, height: 10 }));
    expect(prepared.blob.type).toBe('image/jpeg');
    expect(prepared.name).toBe('a.jpg');
  });
});
