import type { ChapterEvent } from './sessionEvents';

/** Kinds that move a turn forward; system notes, summaries and unknown records say nothing about whether it ended. */
const TURN_KINDS = new Set(['user', 'assistant', 'reasoning', 'tool_call', 'tool_result']);

export interface Ceiling {
  /** The highest seq that may be archived; 0 when nothing may. */
  archiveCeiling: number;
  /** Set when the session ends inside an unfinished turn: the run, its first seq and why it counts as unfinished. */
  openTurn: { runId: string; fromSeq: number; reason: string } | null;
}

/**
 * The archive ceiling: everything up to the end of the last finished turn. Only the session's
 * last run can still be running — an earlier one ended when the next request started — and it
 * is unfinished when, judged from its events alone:
 * - a tool call has no result yet, or
 * - its last turn event is not an assistant reply: a request nobody answered yet, a tool result
 *   the model has not spoken about, or reasoning still under way.
 * Erring this way keeps a half-done exchange out of the archive; it belongs in the handoff note.
 */
export function archiveCeiling(events: readonly ChapterEvent[]): Ceiling {
  const last = events[events.length - 1];
  if (!last) return { archiveCeiling: 0, openTurn: null };
  const runEvents = events.filter((e) => e.runId === last.runId);
  const reason = unfinishedReason(runEvents);
  if (!reason) return { archiveCeiling: last.seq, openTurn: null };
  const fromSeq = Math.min(...runEvents.map((e) => e.seq));
  const before = events.filter((e) => e.seq < fromSeq);
  return { archiveCeiling: before.length ? (before[before.length - 1] as ChapterEvent).seq : 0, openTurn: { runId: last.runId, fromSeq, reason } };
}

function unfinishedReason(run: readonly ChapterEvent[]): string | undefined {
  const results = new Set(run.filter((e) => e.kind === 'tool_result' && e.callId).map((e) => e.callId));
  const dangling = run.filter((e) => e.kind === 'tool_call' && e.callId && !results.has(e.callId));
  if (dangling.length) {
    const d = dangling[dangling.length - 1] as ChapterEvent;
    return `the ${d.toolName ?? 'tool'} call at seq ${d.seq} has no result yet`;
  }
  const turn = run.filter((e) => TURN_KINDS.has(e.kind));
  const lastTurn = turn[turn.length - 1];
  if (!lastTurn || lastTurn.kind === 'assistant') return undefined;
  switch (lastTurn.kind) {
    case 'user':
      return `the request at seq ${lastTurn.seq} has no assistant reply after it`;
    case 'tool_result':
      return `the tool result at seq ${lastTurn.seq} has not been answered by the assistant yet`;
    default:
      return `the turn ends in ${lastTurn.kind} at seq ${lastTurn.seq}, before any reply`;
  }
}
