/**
 * The steps of a web search (or deep search) while it prepares an answer, from the
 * server's `search.progress` frames (docs/protocol.md). Ephemeral: kept in memory per
 * answer (messageId) until its `message.completed`, never stored, not replayed.
 */
import type { TFunction } from 'i18next';
import type { SearchStage } from '@/lib/socket-protocol';

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

const STAGES = new Set<string>(['searching', 'reading', 'reflecting', 'writing']);

/** A deep search has a few rounds of a few steps; more than this is not kept. */
export const MAX_STEPS = 40;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

const whole = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : null;

export interface ProgressFrame {
  conversationId: string;
  messageId: string;
  deep: boolean;
  step: SearchStep;
}

/** A `search.progress` frame as this tab keeps it, or null when it is not one. */
export function readProgressFrame(frame: unknown): ProgressFrame | null {
  if (!isObject(frame)) return null;
  const { conversationId, messageId, stage } = frame;
  if (typeof conversationId !== 'string' || typeof messageId !== 'string') return null;
  if (typeof stage !== 'string' || !STAGES.has(stage)) return null;
  // Queries belong to `searching`, pages to `reading` (docs/protocol.md).
  const queries =
    stage === 'searching' && Array.isArray(frame.queries)
      ? frame.queries.filter((q): q is string => typeof q === 'string' && q.trim() !== '').map((q) => q.trim())
      : [];
  const round = Math.max(1, whole(frame.round) ?? 1);
  const rounds = Math.max(round, whole(frame.rounds) ?? round);
  return {
    conversationId,
    messageId,
    deep: frame.deep === true,
    step: { stage: stage as SearchStage, queries, pages: stage === 'reading' ? whole(frame.pages) : null, round, rounds },
  };
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
