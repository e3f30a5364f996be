import { describe, expect, it } from 'vitest';
import type { ServerFrames } from '@/lib/socket-protocol';
import { addStep, MAX_STEPS, readProgressFrame } from './search-progress';

const frame = (overrides: Partial<ServerFrames['search.progress']> = {}): ServerFrames['search.progress'] => ({
  conversationId: 'c1',
  messageId: 'm1',
  stage: 'searching',
  queries: ['a'],
  round: 1,
  rounds: 3,
  deep: true,
  ...overrides,
});

describe('a search.progress frame', () => {
  it('is read with only what each stage carries', () => {
    expect(readProgressFrame(frame())).toEqual({
      conversationId: 'c1',
      messageId: 'm1',
      deep: true,
      step: { stage: 'searching', queries: ['a'], pages: null, round: 1, rounds: 3 },
    });
    expect(readProgressFrame(frame({ stage: 'reading', queries: undefined, pages: 3, deep: false })).step).toEqual({
      stage: 'reading',
      queries: [],
      pages: 3,
      round: 1,
      rounds: 3,
    });
  });

  it('keeps only the queries that say something', () => {
    expect(readProgressFrame(frame({ queries: ['  x ', ''] })).step.queries).toEqual(['x']);
  });
});

describe('the steps of an answer', () => {
  const read = (overrides: Partial<ServerFrames['search.progress']>) => readProgressFrame(frame(overrides));

  it('grow by stage and round; the same stage again in its round replaces the last', () => {
    let progress = addStep(undefined, read({}));
    progress = addStep(progress, read({ stage: 'reading', pages: 2 }));
    progress = addStep(progress, read({ stage: 'reading', pages: 4 }));
    progress = addStep(progress, read({ stage: 'reflecting' }));
    progress = addStep(progress, read({ queries: ['b'], round: 2 }));
    expect(progress.steps.map((s) => `${s.stage}${s.round}:${s.pages ?? s.queries.join()}`)).toEqual([
      'searching1:a',
      'reading1:4',
      'reflecting1:',
      'searching2:b',
    ]);
    expect(progress).toMatchObject({ conversationId: 'c1', deep: true });
  });

  it('keep at most a bounded number', () => {
    let progress = addStep(undefined, read({}));
    for (let round = 2; round < MAX_STEPS + 10; round += 1) progress = addStep(progress, read({ round, rounds: round }));
    expect(progress.steps).toHaveLength(MAX_STEPS);
    expect(progress.steps.at(-1)?.round).toBe(MAX_STEPS + 9);
  });
});
