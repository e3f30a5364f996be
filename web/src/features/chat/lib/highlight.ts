import type { Highlight } from '@/types/generated';

/** A piece of a search hit's text: a match (shown in <mark>) or the text between. */
export interface TextPart {
  text: string;
  match: boolean;
}

/**
 * Cuts `text` at the server's match offsets (UTF-16 code units, `[start, end)`, the
 * units JavaScript's strings count in). Offsets out of range are clamped, empty ones
 * dropped, overlapping or touching ones joined, so a slip of the server never loses text.
 */
export function splitHighlights(text: string, highlights: readonly Highlight[]): TextPart[] {
  const ranges = highlights
    .map(({ start, end }) => [Math.max(0, Math.min(start, text.length)), Math.max(0, Math.min(end, text.length))] as const)
    .filter(([start, end]) => end > start)
    .sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [start, end] of ranges) {
    const last = merged[merged.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  const parts: TextPart[] = [];
  let at = 0;
  for (const [start, end] of merged) {
    if (start > at) parts.push({ text: text.slice(at, start), match: false });
    parts.push({ text: text.slice(start, end), match: true });
    at = end;
  }
  if (at < text.length) parts.push({ text: text.slice(at), match: false });
  return parts;
}
