import { isRefusal, refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { archiveAndOpen, type ContinueResult, type RangeInput } from './archive';
import type { ChildIntent } from './chaptersSchema';
import { clip } from './plans';
import { composeFirstMessage, readSessionState, tocChapters, type SessionState } from './planning';
import { DEFAULT_PRESET, resolvePreset, type PresetName, type PresetUsed } from './presets';
import { archivedUpTo, segmentSession } from './segment';
import { proposeRanges, type ProposedRange } from './segmenter';
import { tokenEstimator, type ChapterEvent } from './sessionEvents';
import type { TocChapter } from './toc';

export interface DoorRequest {
  sessionId: string;
  intent: ChildIntent;
  /** Archive up to this row (a person's click on it); default: the archive ceiling. */
  uptoSeq?: number | undefined;
  /** What the person typed after /continue or /fork; default: a note Recollect writes from the events. */
  note?: string | undefined;
  preset?: PresetName | undefined;
  client: string;
}

/**
 * The deterministic door (the person's Continue/Fork with chapters, /continue and /fork):
 * Recollect derives the ranges itself — everything not archived yet, up to the row or the
 * ceiling, in chapter-shaped runs — instead of asking a model to chain segment → continue.
 * A fork from here archives the new span first, then branches.
 */
export async function openDoor(store: Store, req: DoorRequest): Promise<ContinueResult | Refusal> {
  const seg = segmentSession(store, req.sessionId, req.preset, req.uptoSeq);
  if (isRefusal(seg)) return seg;
  if (req.uptoSeq !== undefined && req.uptoSeq > seg.archiveCeiling) {
    const why = seg.openTurn ? `: seq ${seg.openTurn.fromSeq} onwards is an unfinished turn (${seg.openTurn.reason})` : '';
    return refuse(`seq ${req.uptoSeq} is above the archive ceiling ${seg.archiveCeiling}${why}. Nothing was archived.`, { limit: seg.archiveCeiling, used: req.uptoSeq, unit: 'items' });
  }
  if (seg.archiveCeiling === 0) {
    return refuse(`nothing in ${req.sessionId} can be archived yet: ${seg.openTurn ? `its only turn is unfinished (${seg.openTurn.reason})` : 'it has no events'}.`);
  }
  const state = readSessionState(store, req.sessionId);
  if (isRefusal(state)) return state;
  const upto = req.uptoSeq ?? seg.archiveCeiling;
  const note = req.note?.trim() ? req.note : defaultNote(state, seg.session.title, upto, req.intent, seg.openTurn);
  const base = { sessionId: req.sessionId, note, intent: req.intent, client: req.client };

  // A person who chose no preset gets the larger one before a refusal: that is more room, not less text.
  let preset: PresetName = req.preset ?? DEFAULT_PRESET;
  let fit = fitRanges(state, req.intent, seg.ranges, upto, note, resolvePreset(preset));
  if (!fit.fits && !req.preset) {
    preset = 'generous';
    fit = fitRanges(state, req.intent, seg.ranges, upto, note, resolvePreset(preset));
  }
  const result = await archiveAndOpen(store, { ...base, ranges: fit.ranges, preset });
  if (!isRefusal(result)) {
    if (fit.grown) result.warnings.unshift(`the table of contents would not fit the ${preset} budget at ${seg.ranges.length} chapters, so Recollect grouped the requests into ${fit.ranges.length} larger chapters.`);
    if (preset !== (req.preset ?? DEFAULT_PRESET)) result.warnings.unshift(`the table of contents and note did not fit the ${DEFAULT_PRESET} budget, so the ${preset} preset was used.`);
  }
  return result;
}

/** Room kept for the plan section, which is known only once chapters are rendered. */
const PLAN_ALLOWANCE = 0.9;

/**
 * The proposed ranges, grouped into fewer, larger chapters until the table of contents (built
 * with estimated sizes) and the note fit the budget. Whole requests stay whole; the exact check
 * comes after rendering, and refuses with the numbers if the estimate was wrong.
 */
function fitRanges(state: SessionState, intent: ChildIntent, proposed: readonly ProposedRange[], upto: number, note: string, preset: PresetUsed): { ranges: RangeInput[]; fits: boolean; grown: boolean } {
  const estimate = tokenEstimator(state.events);
  const from = archivedUpTo(state, upto);
  let ranges = proposed;
  let target = preset.chapterTargetTokens;
  for (let round = 0; ; round++) {
    const pseudo = ranges.map((r, i) => pseudoChapter(state, r, i));
    const first = composeFirstMessage(state, { marker: 'rcm-00000000', intent, chapters: tocChapters(state, pseudo, upto), plan: null, note, preset: { ...preset, budgetTokens: Math.floor(preset.budgetTokens * PLAN_ALLOWANCE) } });
    const fits = !isRefusal(first);
    if (fits || ranges.length <= 1 || round >= 24) return { ranges: ranges.map(({ startSeq, endSeq, title, summary }) => ({ startSeq, endSeq, title, summary })), fits, grown: round > 0 };
    target *= 2;
    ranges = proposeRanges(state.events, from, upto, target, estimate);
  }
}

function pseudoChapter(state: SessionState, r: ProposedRange, i: number): TocChapter {
  // Same shape and length as a real id, so the estimate measures what the real table will hold.
  return { id: `ch_${String(i).padStart(19, '0')}`, title: r.title, summary: r.summary, sessionId: state.session.id, source: state.session.source, startSeq: r.startSeq, endSeq: r.endSeq, tokens: r.estimatedTokens, sha256: '', firstAt: null, lastAt: null };
}

/** The handoff note when the person gave none: where the parent stood, in its own words. */
function defaultNote(state: SessionState, title: string | null, upto: number, intent: ChildIntent, openTurn: { fromSeq: number; reason: string } | null): string {
  const events = state.events;
  const sessionId = state.session.id;
  const lastRequest = [...events].reverse().find((e) => e.kind === 'user' && e.seq <= upto);
  const lastReply = [...events].reverse().find((e) => e.kind === 'assistant' && e.seq <= upto);
  const lines = [
    `${intent === 'continue' ? 'Continued' : 'Forked'} by a person from ${title ? `"${clip(oneLine(title), 100)}"` : sessionId}, archived up to seq ${upto}.`,
  ];
  if (lastRequest) lines.push(`The last request archived (seq ${lastRequest.seq}): "${quote(lastRequest)}"`);
  if (lastReply) lines.push(`The last reply archived (seq ${lastReply.seq}): "${quote(lastReply)}"`);
  if (openTurn && openTurn.fromSeq > upto) {
    const pending = events.find((e) => e.kind === 'user' && e.seq >= openTurn.fromSeq);
    lines.push(`Not archived: seq ${openTurn.fromSeq} onwards, a turn still in progress (${openTurn.reason})${pending ? `; its request: "${quote(pending)}"` : ''}.`);
  }
  lines.push(intent === 'continue' ? 'Pick up where it stopped; ask the person if the next step is unclear.' : 'Try another way from here; the parent session carries on separately.');
  return lines.join('\n');
}

function quote(e: ChapterEvent): string {
  return clip(oneLine(e.text), 240);
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
