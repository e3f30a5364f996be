/**
 * Turns a picked image into one the server takes (docs/api.md `POST /api/files`: JPEG, PNG
 * or WebP, at most the plan's `fileLimits.imageMaxMb`), in the browser, before it is sent:
 * - HEIC/HEIF (iPhone photos) becomes JPEG; the converter (libheif in WebAssembly, about
 *   3 MB) is loaded only when such a file is picked;
 * - other formats the browser reads (GIF, BMP, AVIF) are re-encoded;
 * - an image larger than the server keeps (long edge over 2048 px) or than the size limit
 *   is scaled down, so a phone does not upload megabytes the server would throw away.
 * Everything else goes up as it was picked: the server re-encodes it anyway.
 */

/** The server keeps at most this long edge (docs/api.md `POST /api/files`). */
export const MAX_EDGE = 2048;

/** JPEG qualities tried in turn until the image fits the size limit. */
const JPEG_QUALITIES = [0.88, 0.8, 0.7, 0.6];
/** Below the qualities above, the size shrinks by this factor a round (a noisy photo). */
const SHRINK = 0.75;
const SHRINK_ROUNDS = 3;

export type ImageKind =
  /** JPEG, PNG or WebP: the server takes it as it is. */
  | 'direct'
  | 'heic'
  /** Another image format the browser may read: re-encoded here. */
  | 'reencode'
  | 'unsupported';

const DIRECT_TYPES = new Set(['image/jpeg', 'image/pjpeg', 'image/png', 'image/webp']);
const HEIC_TYPES = new Set(['image/heic', 'image/heif', 'image/heic-sequence', 'image/heif-sequence']);
const DIRECT_EXTENSIONS = new Set(['jpg', 'jpeg', 'jfif', 'png', 'webp']);
const HEIC_EXTENSIONS = new Set(['heic', 'heif']);
const REENCODE_EXTENSIONS = new Set(['gif', 'bmp', 'avif']);

function extension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot + 1).toLowerCase();
}

/**
 * What to do with a picked file, by its type or, where the browser gives none (HEIC on
 * most desktops), by its name. SVG is left out: it is no photo, and scripts can hide in it.
 */
export function classifyImage(file: Pick<File, 'name' | 'type'>): ImageKind {
  const type = file.type.toLowerCase();
  const ext = extension(file.name);
  if (HEIC_TYPES.has(type) || HEIC_EXTENSIONS.has(ext)) return 'heic';
  if (DIRECT_TYPES.has(type)) return 'direct';
  if (type === 'image/svg+xml') return 'unsupported';
  if (type.startsWith('image/')) return 'reencode';
  if (type === '' || type === 'application/octet-stream') {
    if (DIRECT_EXTENSIONS.has(ext)) return 'direct';
    if (REENCODE_EXTENSIONS.has(ext)) return 'reencode';
  }
  return 'unsupported';
}

/** A size that fits `maxEdge` on its long edge, the same shape; never 0. */
export function fitWithin(width: number, height: number, maxEdge: number): { width: number; height: number } {
  const long = Math.max(width, height);
  if (long <= maxEdge) return { width, height };
  const scale = maxEdge / long;
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** The name with another extension: `IMG_1.HEIC` → `IMG_1.jpg`. */
export function renamed(name: string, ext: string): string {
  const dot = name.lastIndexOf('.');
  const base = dot > 0 ? name.slice(0, dot) : name || 'image';
  return `${base}.${ext}`;
}

export class ImagePrepError extends Error {
  override readonly name = 'ImagePrepError';
  /** `heic`: SPEC "HEIC image conversion error"; `optimize`: "Image optimization failed". */
  readonly reason: 'heic' | 'optimize';

  constructor(reason: 'heic' | 'optimize', cause?: unknown) {
    super(reason === 'heic' ? 'HEIC conversion failed' : 'Image optimization failed', { cause });
    this.reason = reason;
  }
}

export interface DecodedImage {
  width: number;
  height: number;
  close: () => void;
}

/** What prepareImage needs of the browser; tests give their own. */
export interface ImageIo<I extends DecodedImage = DecodedImage> {
  decode: (blob: Blob) => Promise<I>;
  encode: (image: I, size: { width: number; height: number }, type: 'image/jpeg' | 'image/png', quality?: number) => Promise<Blob>;
  convertHeic: (blob: Blob) => Promise<Blob>;
}

export interface PreparedImage {
  blob: Blob;
  name: string;
  /** The bytes changed (converted or scaled): the picked file's preview may not show them. */
  changed: boolean;
}

/**
 * Prepares `file` for upload (see the top of this file). Rejects with an ImagePrepError;
 * a file the browser cannot read but the server might is passed on for the server to judge.
 */
export async function prepareImage<I extends DecodedImage>(
  file: File,
  maxBytes: number,
  io: ImageIo<I>,
): Promise<PreparedImage> {
  const kind = classifyImage(file);
  let source: Blob = file;
  let name = file.name || 'image';
  if (kind === 'heic') {
    try {
      source = await io.convertHeic(file);
    } catch (cause) {
      throw new ImagePrepError('heic', cause);
    }
    name = renamed(name, 'jpg');
  }

  let image: I;
  try {
    image = await io.decode(source);
  } catch (cause) {
    // The server reads more than some browsers do: let it answer (`image_invalid`).
    if (kind !== 'reencode' && source.size <= maxBytes) return { blob: source, name, changed: kind === 'heic' };
    throw new ImagePrepError('optimize', cause);
  }

  try {
    const fits = Math.max(image.width, image.height) <= MAX_EDGE && source.size <= maxBytes;
    if (fits && kind !== 'reencode') return { blob: source, name, changed: kind === 'heic' };

    let size = fitWithin(image.width, image.height, MAX_EDGE);
    // A screenshot stays PNG (sharp text, transparency) while it fits; photos become JPEG.
    if (source.type === 'image/png') {
      const png = await io.encode(image, size, 'image/png');
      if (png.size <= maxBytes) return { blob: png, name: renamed(name, 'png'), changed: true };
    }
    for (let round = 0; round <= SHRINK_ROUNDS; round += 1) {
      for (const quality of JPEG_QUALITIES) {
        const jpeg = await io.encode(image, size, 'image/jpeg', quality);
        if (jpeg.size <= maxBytes) return { blob: jpeg, name: renamed(name, 'jpg'), changed: true };
      }
      size = { width: Math.max(1, Math.round(size.width * SHRINK)), height: Math.max(1, Math.round(size.height * SHRINK)) };
    }
    throw new ImagePrepError('optimize');
  } catch (cause) {
    throw cause instanceof ImagePrepError ? cause : new ImagePrepError('optimize', cause);
  } finally {
    image.close();
  }
}

/** The browser's own decoder and canvas, and heic-to for HEIC. */
export const browserImageIo: ImageIo<ImageBitmap> = {
  // EXIF orientation is applied, so a phone's portrait photo stays upright after scaling.
  decode: (blob) => createImageBitmap(blob, { imageOrientation: 'from-image' }),
  encode: (image, { width, height }, type, quality) =>
    new Promise<Blob>((resolve, reject) => {
      const canvas = document.createElement('canvas');
      canvas.width = width;
      canvas.height = height;
      const context = canvas.getContext('2d');
      if (!context) {
        reject(new Error('no 2d canvas'));
        return;
      }
      if (type === 'image/jpeg') {
        // JPEG has no transparency: transparent pixels would turn black.
        context.fillStyle = '#ffffff';
        context.fillRect(0, 0, width, height);
      }
      context.imageSmoothingQuality = 'high';
      context.drawImage(image, 0, 0, width, height);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('canvas encode failed'))), type, quality);
    }),
  convertHeic: async (blob) => {
    // The CSP build: no eval, should the server ever send a strict Content-Security-Policy.
    const { heicTo } = await import('heic-to/csp');
    return heicTo({ blob, type: 'image/jpeg', quality: 0.9 });
  },
};
