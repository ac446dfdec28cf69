import type { LcmConfig } from './lcmConfig';

/** An event as the planner sees it (inline text only; the builder reads blobs when it summarises). */
export interface PlanEvent {
  id: number;
  seq: number;
  kind: string;
  bytes: number;
  hash: string;
  /** created_at, or the nearest earlier known time (see effectiveTimes). */
  at: number | null;
}

/**
 * Chunk sizes are planned in estimated tokens (UTF-8 bytes ÷ 4): tokenizing every archived byte
 * with the real o200k tokenizer costs about a second per megabyte here, which would make the
 * first build of a large history take hours. Summaries and everything a model reads are
 * counted with the real tokenizer.
 */
export function estimatedTokens(bytes: number): number {
  return Math.ceil(bytes / 4);
}

/**
 * Many sources leave some events without a time (VS Code chat parts): they take the time of the
 * nearest earlier event, else the session's start, so every summary has a time range.
 */
export function effectiveTimes(times: (number | null)[], sessionStart: number | null): (number | null)[] {
  let last = sessionStart;
  const firstKnown = times.find((t) => t !== null) ?? null;
  if (last === null) last = firstKnown;
  return times.map((t) => {
    if (t !== null) last = t;
    return t ?? last;
  });
}

/**
 * The leaf chunks still to summarise: consecutive uncovered events of the archived range (all
 * but the fresh tail), never spanning an event another leaf already covers, cut at the token
 * budget or the event cap, preferring to cut where a new request starts. When `holdLast` (the
 * session is still active), a trailing chunk under half the budget waits for more events.
 */
export function planLeafChunks(events: PlanEvent[], covered: ReadonlySet<number>, config: LcmConfig, holdLast: boolean): PlanEvent[][] {
  const archived = events.slice(0, Math.max(0, events.length - config.freshTailEvents));
  const chunks: PlanEvent[][] = [];
  let current: PlanEvent[] = [];
  let tokens = 0;
  const flush = () => {
    if (current.length) chunks.push(current);
    current = [];
    tokens = 0;
  };
  for (const e of archived) {
    if (covered.has(e.id)) {
      flush();
      continue;
    }
    const cost = estimatedTokens(e.bytes);
    const full = current.length > 0 && (tokens + cost > config.leafChunkTokens || current.length >= config.leafMaxEvents);
    const goodCut = current.length > 0 && e.kind === 'user' && tokens >= config.leafChunkTokens / 2;
    if (full || goodCut) flush();
    current.push(e);
    tokens += cost;
  }
  const trailing = current;
  flush();
  const last = chunks.at(-1);
  if (holdLast && last === trailing && last.length > 0) {
    const size = last.reduce((n, e) => n + estimatedTokens(e.bytes), 0);
    const reachesEnd = archived.at(-1)?.id === last.at(-1)?.id;
    if (reachesEnd && size < config.leafChunkTokens / 2 && last.length < config.leafMaxEvents) chunks.pop();
  }
  return chunks;
}
