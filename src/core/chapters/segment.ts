import { isRefusal, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { readSessionState, type SessionState } from './planning';
import { detectPlans, type DetectedPlan } from './plans';
import { PRESETS, resolvePreset, type PresetName } from './presets';
import { proposeRanges, toolResultFacts, type ProposedRange, type ToolResultFact } from './segmenter';
import { tokenEstimator } from './sessionEvents';

/** Plan calls listed by chapters_segment; each is a full snapshot, so the newest say the most. */
const PLANS_LISTED = 10;

export interface SegmentResult {
  ok: true;
  session: { id: string; source: string; title: string | null };
  archiveCeiling: number;
  /** Events at or below the ceiling: what can be archived at all. */
  eventCount: number;
  sessionEvents: number;
  /** Why the ceiling is below the last event, when it is. */
  openTurn: { fromSeq: number; reason: string } | null;
  ranges: ProposedRange[];
  toolResults: ToolResultFact[];
  toolResultsOmitted: number;
  /** The newest plan calls at or below the ceiling (each call is a snapshot of the whole plan). */
  plans: DetectedPlan[];
  /** Older plan calls not listed. */
  plansOmitted: number;
  /** Plans above the ceiling: inside an unfinished turn, so nothing can archive them yet. */
  livePlans: DetectedPlan[];
  /** This session is itself a chapters child: it opened with a table of contents it carries forward. */
  modeActive: boolean;
  existingChapters: { id: string; title: string; startSeq: number; endSeq: number; tokens: number }[];
  budgetHint: {
    preset: string;
    budgetTokens: number;
    chapterTargetTokens: number;
    presets: typeof PRESETS;
    /** Chapters the next table of contents carries already (ancestry and this session), about 40 tokens each. */
    carriedChapters: number;
  };
}

/**
 * Facts for planning an archive of a session: the ceiling, proposed chapter-shaped ranges over
 * what is not archived yet, every tool result's real size, and the plans found on each side of
 * the ceiling. Reads only.
 */
/** Where new ranges start: after what is archived already up to `upto`, and after the table of contents a child opened with. */
export function archivedUpTo(s: SessionState, upto: number): number {
  return Math.max(s.floor, ...s.existing.filter((c) => c.endSeq <= upto).map((c) => c.endSeq));
}

export function segmentSession(store: Store, sessionId: string, preset?: PresetName, uptoSeq?: number): SegmentResult | Refusal {
  const s = readSessionState(store, sessionId);
  if (isRefusal(s)) return s;
  const p = resolvePreset(preset);
  const ceiling = s.ceiling.archiveCeiling;
  const upto = Math.min(uptoSeq ?? ceiling, ceiling);
  const archivedTo = archivedUpTo(s, upto);
  const below = s.events.filter((e) => e.seq <= ceiling);
  const above = s.events.filter((e) => e.seq > ceiling);
  const estimate = tokenEstimator(s.events);
  const facts = toolResultFacts(s.events, archivedTo, upto, estimate);
  const planText = (e: { text: string }) => e.text;
  const plans = detectPlans(below, planText, estimate);
  return {
    ok: true,
    session: { id: s.session.id, source: s.session.source, title: s.session.title },
    archiveCeiling: ceiling,
    eventCount: below.length,
    sessionEvents: s.events.length,
    openTurn: s.ceiling.openTurn ? { fromSeq: s.ceiling.openTurn.fromSeq, reason: s.ceiling.openTurn.reason } : null,
    ranges: proposeRanges(s.events, archivedTo, upto, p.chapterTargetTokens, estimate),
    toolResults: facts.listed,
    toolResultsOmitted: facts.omitted,
    plans: plans.slice(-PLANS_LISTED),
    plansOmitted: Math.max(0, plans.length - PLANS_LISTED),
    livePlans: detectPlans(above, planText, estimate),
    modeActive: !!s.child,
    existingChapters: s.existing.map((c) => ({ id: c.id, title: c.title, startSeq: c.startSeq, endSeq: c.endSeq, tokens: c.tokens })),
    budgetHint: {
      preset: p.name,
      budgetTokens: p.budgetTokens,
      chapterTargetTokens: p.chapterTargetTokens,
      presets: PRESETS,
      carriedChapters: (s.child?.carried.length ?? 0) + s.existing.length,
    },
  };
}
