import { describe, expect, it } from 'vitest';
import { splitHighlights } from './highlight';

const marks = (text: string, ranges: [number, number][]) =>
  splitHighlights(
    text,
    ranges.map(([start, end]) => ({ start, end })),
  );

describe('splitHighlights', () => {
  it('cuts the text at the matches, keeping every character once', () => {
    expect(marks('the lighthouse keeper', [[4, 14]])).toEqual([
      { text: 'the ', match: false },
      { text: 'lighthouse', match: true },
      { text: ' keeper', match: false },
    ]);
  });

  it('marks several matches, in order whatever order the server sent them in', () => {
    expect(marks('ab cd ef', [[6, 8], [0, 2]])).toEqual([
      { text: 'ab', match: true },
      { text: ' cd ', match: false },
      { text: 'ef', match: true },
    ]);
  });

  it('counts in UTF-16 units, as the server does: accents and emoji stay whole', () => {
    // "😀" is two units: "árvíztűrő" starts at 3.
    const text = '😀 árvíztűrő tükörfúrógép';
    const parts = marks(text, [[3, 12]]);
    expect(parts).toEqual([
      { text: '😀 ', match: false },
      { text: 'árvíztűrő', match: true },
      { text: ' tükörfúrógép', match: false },
    ]);
  });

  it('joins overlapping and touching matches', () => {
    expect(marks('abcdef', [[0, 3], [2, 4], [4, 5]])).toEqual([
      { text: 'abcde', match: true },
      { text: 'f', match: false },
    ]);
  });

  it('clamps offsets past the end and drops empty or reversed ones', () => {
    expect(marks('short', [[3, 99], [1, 1], [4, 2]])).toEqual([
      { text: 'sho', match: false },
      { text: 'rt', match: true },
    ]);
  });

  it('answers the text alone without matches, and nothing for an empty text', () => {
    expect(marks('plain', [])).toEqual([{ text: 'plain', match: false }]);
    expect(marks('', [[0, 3]])).toEqual([]);
  });
});
