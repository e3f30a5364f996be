// Draws the app icons (public/icons/*.png) from the same shapes as public/favicon.svg,
// with Node alone: no image library and no download. Run `npm run icons` after changing
// the shapes; the PNGs are committed.
import { writeFileSync, mkdirSync } from 'node:fs';
import { encodePng } from './png.mjs';

const BLUE = [0x3b, 0x5b, 0xdb, 255];
const WHITE = [255, 255, 255, 255];
const CLEAR = [0, 0, 0, 0];

function inRoundedRect(x, y, left, top, right, bottom, r) {
  if (x < left || x > right || y < top || y > bottom) return false;
  const cx = Math.min(Math.max(x, left + r), right - r);
  const cy = Math.min(Math.max(y, top + r), bottom - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

function inTriangle(x, y, [ax, ay], [bx, by], [cx, cy]) {
  const d1 = (x - bx) * (ay - by) - (ax - bx) * (y - by);
  const d2 = (x - cx) * (by - cy) - (bx - cx) * (y - cy);
  const d3 = (x - ax) * (cy - ay) - (cx - ax) * (y - ay);
  const negative = d1 < 0 || d2 < 0 || d3 < 0;
  const positive = d1 > 0 || d2 > 0 || d3 > 0;
  return !(negative && positive);
}

/** The colour at a point of the 64×64 design. */
function colourAt(x, y, { fullBleed }) {
  const background = fullBleed || inRoundedRect(x, y, 0, 0, 64, 64, 14);
  if (!background) return CLEAR;
  const bubble = inRoundedRect(x, y, 11, 18, 53, 44, 6) || inTriangle(x, y, [21, 43], [31, 43], [21, 52]);
  const dot = [24, 32, 40].some((cx) => (x - cx) ** 2 + (y - 31) ** 2 <= 9);
  return bubble && !dot ? WHITE : BLUE;
}

function render(size, { fullBleed = false, contentScale = 1 } = {}) {
  const samples = 4; // 4×4 supersampling for smooth edges
  const pixels = Buffer.alloc(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < samples; sy++) {
        for (let sx = 0; sx < samples; sx++) {
          // Map to design space, scaling the content around the centre (maskable safe zone).
          const u = ((px + (sx + 0.5) / samples) / size) * 64;
          const v = ((py + (sy + 0.5) / samples) / size) * 64;
          const x = 32 + (u - 32) / contentScale;
          const y = 32 + (v - 32) / contentScale;
          const c = fullBleed && (x < 0 || x > 64 || y < 0 || y > 64) ? BLUE : colourAt(x, y, { fullBleed });
          const alpha = c[3] / 255;
          sum[0] += c[0] * alpha;
          sum[1] += c[1] * alpha;
          sum[2] += c[2] * alpha;
          sum[3] += c[3];
        }
      }
      const n = samples * samples;
      const a = sum[3] / n;
      const i = (py * size + px) * 4;
      // Un-premultiply so edge pixels keep their colour.
      pixels[i] = a ? Math.round(sum[0] / n / (a / 255)) : 0;
      pixels[i + 1] = a ? Math.round(sum[1] / n / (a / 255)) : 0;
      pixels[i + 2] = a ? Math.round(sum[2] / n / (a / 255)) : 0;
      pixels[i + 3] = Math.round(a);
    }
  }
  return encodePng(size, size, pixels);
}


const out = new URL('../public/icons/', import.meta.url);
mkdirSync(out, { recursive: true });
writeFileSync(new URL('icon-192.png', out), render(192));
writeFileSync(new URL('icon-512.png', out), render(512));
// Maskable: full-bleed background, content inside the central 80% safe zone.
writeFileSync(new URL('icon-maskable-512.png', out), render(512, { fullBleed: true, contentScale: 0.75 }));
console.log('icons written to public/icons/');
