/**
 * The steps of a web search (or deep search) while it prepares an answer, from the
 * server's `search.progress` frames (docs/protocol.md). Ephemeral: kept in memory per
 * answer (messageId) until its `message.completed`, never stored, not replayed.
 */
import type { TFunction } from 'i18next';
import type { ServerFrames } from '@/lib/socket-protocol';
import type { SearchStage } from '@/types/generated';

export interface SearchStep {
  stage: SearchStage;
  /** What is searched for (`searching`). */
  queries: string[];
  /** How many pages are read (`reading`); null when the frame named none. */
  pages: number | null;
  round: number;
  rounds: number;
}

export interface SearchProgress {
  conversationId: string;
  /** A deep search: every step is shown, not only the latest. */
  deep: boolean;
  /** The steps so far, oldest first; a step repeated within its round replaces the last. */
  steps: SearchStep[];
}

/** A deep search has a few rounds of a few steps; more than this is not kept. */
export const MAX_STEPS = 40;

export interface ProgressFrame {
  conversationId: string;
  messageId: string;
  deep: boolean;
  step: SearchStep;
}

/** A `search.progress` frame as this tab keeps it. */
export function readProgressFrame(frame: ServerFrames['search.progress']): ProgressFrame {
  const { conversationId, messageId, stage, deep, round, rounds } = frame;
  // Queries belong to `searching`, pages to `reading` (docs/protocol.md).
  const queries = stage === 'searching' ? (frame.queries ?? []).map((q) => q.trim()).filter((q) => q !== '') : [];
  const pages = stage === 'reading' ? (frame.pages ?? null) : null;
  return { conversationId, messageId, deep, step: { stage, queries, pages, round, rounds } };
}

/** The progress with one more step (the same stage again within a round updates it). */
export function addStep(progress: SearchProgress | undefined, frame: ProgressFrame): SearchProgress {
  const steps = progress?.steps ?? [];
  const last = steps[steps.length - 1];
  const next =
    last && last.stage === frame.step.stage && last.round === frame.step.round
      ? [...steps.slice(0, -1), frame.step]
      : [...steps, frame.step].slice(-MAX_STEPS);
  return { conversationId: frame.conversationId, deep: (progress?.deep ?? false) || frame.deep, steps: next };
}

/** One step in the interface's language ("Searching the web: “a”, “b”", "Reading 3 pages"…). */
export function stepText(step: SearchStep, t: TFunction<'chat'>): string {
  switch (step.stage) {
    case 'searching':
      return step.queries.length === 0
        ? t('search.searchingNoQueries')
        : t('search.searching', { queries: step.queries.map((query) => t('search.query', { query })).join(', ') });
    case 'reading':
      return step.pages === null ? t('search.readingNoCount') : t('search.reading', { count: step.pages });
    case 'reflecting':
      return t('search.reflecting', { round: step.round, rounds: step.rounds });
    case 'writing':
      return t('search.writing');
  }
}
