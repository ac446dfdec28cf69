import { refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { countTokens } from '../text/tokens';
import { archiveCeiling, type Ceiling } from './ceiling';
import type { ChildIntent } from './chaptersSchema';
import { chaptersOfSession, latestPlan, lineageOf, linkedChild, ownCarried, seedSeq, type LinkedChild } from './lineage';
import type { PresetUsed } from './presets';
import { loadEvents, sessionInfo, type ChapterEvent, type SessionInfo } from './sessionEvents';
import { buildFirstMessage, type TocChapter, type TocPlan } from './toc';

/** Everything a continue or fork needs to know about the session before it decides anything. */
export interface SessionState {
  session: SessionInfo;
  events: ChapterEvent[];
  ceiling: Ceiling;
  /** The seq of the table of contents this session opened with (a linked child), else 0: archiving starts after it. */
  floor: number;
  child: LinkedChild | undefined;
  existing: TocChapter[];
  lineage: string[];
}

export function readSessionState(store: Store, sessionId: string): SessionState | Refusal {
  const session = sessionInfo(store, sessionId);
  if (!session) return refuse(`no imported session "${sessionId}"; chat_history mode=list shows this session, or import its transcript first`);
  const db = store.db;
  const events = loadEvents(store, sessionId);
  const child = linkedChild(db, sessionId);
  return {
    session,
    events,
    ceiling: archiveCeiling(events),
    floor: child ? seedSeq(db, sessionId, child.marker) : 0,
    child,
    existing: chaptersOfSession(db, sessionId),
    lineage: lineageOf(db, sessionId),
  };
}

export interface Budget {
  requested: number;
  used: number;
  remaining: number;
  /** Tokens of the table of contents and of the handoff note, which together are `used`. */
  toc: number;
  note: number;
}

export interface FirstMessage {
  text: string;
  budget: Budget;
}

/**
 * Builds the next session's first message and holds it to the budget. Over budget is a
 * refusal with the measured numbers: nothing is trimmed, and the caller has written nothing yet.
 */
export function composeFirstMessage(
  s: SessionState,
  args: { marker: string; intent: ChildIntent; chapters: readonly TocChapter[]; plan: TocPlan | null; note: string; preset: PresetUsed },
): FirstMessage | Refusal {
  const built = buildFirstMessage({
    marker: args.marker,
    intent: args.intent,
    parent: { id: s.session.id, title: s.session.title, source: s.session.source },
    lineage: s.lineage,
    chapters: args.chapters,
    latestPlan: args.plan,
    note: args.note,
  });
  const used = countTokens(built.text);
  const toc = countTokens(built.toc);
  const note = countTokens(built.note);
  const limit = args.preset.budgetTokens;
  if (used > limit) {
    return refuse(
      `the next session's first message would be ${used} tokens (table of contents ${toc} for ${args.chapters.length} chapters, handoff note ${note}), over the ${limit}-token budget of preset "${args.preset.name}" by ${used - limit}. Nothing was archived or opened. Shorten the note, merge chapters into fewer ranges, or choose a larger preset or budgetTokens.`,
      { limit, used, unit: 'tokens' },
    );
  }
  return { text: built.text, budget: { requested: limit, used, remaining: limit - used, toc, note } };
}

/** The chapters a child of this session carries: the ancestry's first, then this session's own by seq. */
export function tocChapters(s: SessionState, chosen: readonly TocChapter[], uptoSeq: number): TocChapter[] {
  const own = [...ownCarried(s.existing, chosen, uptoSeq), ...chosen].sort((a, b) => a.startSeq - b.startSeq);
  const ancestry = s.child?.carried ?? [];
  const seen = new Set<string>();
  return [...ancestry, ...own].filter((c) => !seen.has(c.id) && seen.add(c.id));
}

/** The plan a child is told about: the newest one among the carried chapters, new ones included. */
export function planFor(store: Store, chapters: readonly TocChapter[], fresh: readonly TocPlan[]): TocPlan | null {
  const freshByChapter = new Map(fresh.map((p) => [p.chapterId, p]));
  for (let i = chapters.length - 1; i >= 0; i--) {
    const c = chapters[i] as TocChapter;
    const plan = freshByChapter.get(c.id) ?? latestPlan(store.db, [c.id]);
    if (plan) return plan;
  }
  return null;
}

/** Events in (floor, uptoSeq] that no carried chapter of this session covers, as "seq a–b (n events)" spans. */
export function coverageGaps(s: SessionState, own: readonly TocChapter[], uptoSeq: number): string[] {
  const covered = (seq: number) => own.some((c) => c.sessionId === s.session.id && c.startSeq <= seq && seq <= c.endSeq);
  const gaps: string[] = [];
  let start: number | null = null;
  let count = 0;
  let prev = 0;
  for (const e of s.events) {
    if (e.seq <= s.floor || e.seq > uptoSeq) continue;
    if (!covered(e.seq)) {
      start ??= e.seq;
      count++;
    } else if (start !== null) {
      gaps.push(`seq ${start}–${prev} (${count} events)`);
      start = null;
      count = 0;
    }
    prev = e.seq;
  }
  if (start !== null) gaps.push(`seq ${start}–${prev} (${count} events)`);
  return gaps;
}
