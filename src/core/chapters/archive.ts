import { createHash } from 'node:crypto';
import { newId } from '../ids';
import { isRefusal, refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { textProblem } from '../text/textRules';
import { countTokens } from '../text/tokens';
import type { ChapterRecord, ChaptersArchived, ChildIntent, PlanRecord } from './chaptersSchema';
import { detectPlans, type DetectedPlan } from './plans';
import { composeFirstMessage, coverageGaps, planFor, readSessionState, tocChapters, type Budget, type SessionState } from './planning';
import { resolvePreset, type PresetName, type PresetUsed } from './presets';
import { indexTextOf, renderChapter, renderPlan, topicsOf, type FullEvent } from './render';
import { fullText } from './sessionEvents';
import { POOL_BLOB_MAX } from '../pool/poolBlobs';
import { sharedScope } from '../pool/teamShare';
import { newMarker, type TocChapter, type TocPlan } from './toc';

export interface RangeInput {
  startSeq: number;
  endSeq: number;
  title: string;
  summary: string;
}

export interface ContinueRequest {
  sessionId: string;
  ranges: readonly RangeInput[];
  note: string;
  title?: string | undefined;
  preset?: PresetName | undefined;
  budgetTokens?: number | undefined;
  intent: ChildIntent;
  client: string;
}

export interface ArchivedChapter {
  id: string;
  title: string;
  summary: string;
  startSeq: number;
  endSeq: number;
  sha256: string;
  tokens: number;
  path: string;
  /** False when the range was archived before with these bounds and is cited as it is. */
  new: boolean;
}

export interface ContinueResult {
  ok: true;
  childSessionId: string;
  marker: string;
  intent: ChildIntent;
  presetUsed: PresetUsed;
  chapters: ArchivedChapter[];
  /** The whole table of contents the child gets: every chapter of the ancestry and of this session. */
  toc: { chapters: number; tokens: number };
  warnings: string[];
  budget: Budget;
  firstMessage: string;
}

interface Rendered {
  record: ChapterRecord;
  markdown: string;
  plans: { record: PlanRecord; markdown: string }[];
}

/**
 * Archives the chosen ranges as verbatim chapters and records the child session that carries
 * the whole table of contents. Every check — ranges, ceiling, budget — runs before anything is
 * written; blobs are written before the journal line that names them.
 */
export async function archiveAndOpen(store: Store, req: ContinueRequest): Promise<ContinueResult | Refusal> {
  const state = readSessionState(store, req.sessionId);
  if (isRefusal(state)) return state;
  const preset = resolvePreset(req.preset, req.budgetTokens);
  const bad = checkRanges(state, req.ranges) ?? checkText(req);
  if (bad) return bad;

  const at = store.now;
  const warnings: string[] = [];
  const chosen: TocChapter[] = [];
  const rendered: Rendered[] = [];
  const out: ArchivedChapter[] = [];
  for (const range of req.ranges) {
    const same = state.existing.find((c) => c.startSeq === range.startSeq && c.endSeq === range.endSeq);
    if (same) {
      if (same.title !== range.title) warnings.push(`seq ${range.startSeq}–${range.endSeq} was archived before as "${same.title}" (${same.id}); that chapter is cited as it is.`);
      chosen.push(same);
      out.push({ ...pick(same), path: store.blobs.pathOf(same.sha256), new: false });
      continue;
    }
    const r = renderRange(store, state, range, at);
    rendered.push(r);
    const toc = { ...pick(r.record), sessionId: r.record.sessionId, source: state.session.source, firstAt: r.record.firstAt, lastAt: r.record.lastAt };
    chosen.push(toc);
    out.push({ ...pick(r.record), path: store.blobs.pathOf(r.record.sha256), new: true });
  }
  warnings.push(...overTarget(rendered.map((r) => r.record), preset));

  const uptoSeq = req.ranges.length ? Math.max(...req.ranges.map((r) => r.endSeq)) : Math.max(state.floor, ...state.existing.filter((c) => c.endSeq <= state.ceiling.archiveCeiling).map((c) => c.endSeq));
  const toc = tocChapters(state, chosen, uptoSeq);
  const freshPlans: TocPlan[] = rendered.flatMap((r) => r.plans.map(({ record: p }) => ({ id: p.id, chapterId: p.chapterId, toolName: p.toolName, seq: p.seq, title: p.title, status: p.status, outline: p.outline })));
  const marker = newMarker();
  const first = composeFirstMessage(state, { marker, intent: req.intent, chapters: toc, plan: planFor(store, toc, freshPlans), note: req.note, preset });
  if (isRefusal(first)) return first;

  for (const gap of coverageGaps(state, toc, uptoSeq)) warnings.push(`${gap} of this session are in no chapter, so the next session cannot open them.`);
  if (!rendered.length) warnings.push('nothing new was archived: the next session carries the chapters that already existed.');
  if (state.ceiling.openTurn) warnings.push(`seq ${state.ceiling.openTurn.fromSeq} onwards is an unfinished turn (${state.ceiling.openTurn.reason}) and was not archived; say in the handoff note what was in progress.`);

  warnings.push(...markShared(store, rendered));

  // Content first: a journal line never names a blob that is not on disk.
  for (const r of rendered) {
    // Plain files: chapters_search hands out their paths for a plain read.
    store.blobs.putReadable(r.markdown);
    for (const p of r.plans) store.blobs.putReadable(p.markdown);
  }
  const firstSha = store.blobs.putReadable(first.text);
  const childId = `rcs_${newId(at)}`;
  const op: ChaptersArchived = {
    op: 'chapters.archived',
    at,
    chapters: rendered.map((r) => r.record),
    plans: rendered.flatMap((r) => r.plans.map((p) => p.record)),
    child: {
      id: childId,
      marker,
      parentSessionId: state.session.id,
      intent: req.intent,
      uptoSeq,
      title: req.title ?? null,
      note: req.note,
      preset: preset.name,
      firstMessageSha: firstSha,
      firstMessageTokens: first.budget.used,
      createdBy: req.client,
    },
    carried: toc.map((c) => c.id),
  };
  await store.commit(() => ({ op, result: undefined }));
  return {
    ok: true,
    childSessionId: childId,
    marker,
    intent: req.intent,
    presetUsed: preset,
    chapters: out,
    toc: { chapters: toc.length, tokens: toc.reduce((n, c) => n + c.tokens, 0) },
    warnings,
    budget: first.budget,
    firstMessage: first.text,
  };
}

/**
 * When chapters are marked for a team (teamShare.ts), each new chapter and its plans are written
 * in the team's scope, so they travel with their blobs. A chapter whose blob (or a plan's) is over
 * the pool's limit for one blob stays on this machine, and a warning says so with the numbers.
 */
function markShared(store: Store, rendered: readonly Rendered[]): string[] {
  const shared = sharedScope(store.home, 'chapters');
  if (!shared) return [];
  const warnings: string[] = [];
  for (const r of rendered) {
    const largest = Math.max(r.record.bytes, ...r.plans.map((p) => Buffer.byteLength(p.markdown, 'utf8')));
    if (largest > POOL_BLOB_MAX) {
      warnings.push(`chapter "${r.record.title}" (seq ${r.record.startSeq}–${r.record.endSeq}) is ${largest} bytes, over the team pool's limit of ${POOL_BLOB_MAX} bytes for one blob, so it stays on this machine; archive a smaller range to share it.`);
      continue;
    }
    r.record.scope = shared;
    for (const p of r.plans) p.record.scope = shared;
  }
  return warnings;
}

/** One line per chapter over the preset's target, or one line for all of them when there are many. */
function overTarget(chapters: readonly ChapterRecord[], preset: PresetUsed): string[] {
  const over = chapters.filter((c) => c.tokens > preset.chapterTargetTokens);
  const target = `the ${preset.chapterTargetTokens}-token target of preset "${preset.name}"`;
  if (over.length > 3) return [`${over.length} chapters are over ${target} (largest ${Math.max(...over.map((c) => c.tokens))} tokens); their ranges are whole requests or were grown so the table of contents fits.`];
  return over.map((c) => `chapter "${c.title}" (seq ${c.startSeq}–${c.endSeq}) is ${c.tokens} tokens, over ${target}; split it at a run boundary next time (chapters_segment proposes ranges).`);
}

function checkRanges(s: SessionState, ranges: readonly RangeInput[]): Refusal | undefined {
  const ceiling = s.ceiling.archiveCeiling;
  let prevEnd = s.floor;
  for (const [i, r] of ranges.entries()) {
    const name = `chapters[${i}] (seq ${r.startSeq}–${r.endSeq})`;
    if (r.startSeq > r.endSeq) return refuse(`${name}: startSeq is after endSeq. Nothing was archived.`);
    if (r.endSeq > ceiling) {
      const why = s.ceiling.openTurn ? `: seq ${s.ceiling.openTurn.fromSeq} onwards is an unfinished turn (${s.ceiling.openTurn.reason})` : '';
      return refuse(`${name} ends above the archive ceiling ${ceiling}${why}. Nothing was archived.`, { limit: ceiling, used: r.endSeq, unit: 'items' });
    }
    if (r.startSeq <= s.floor && s.floor > 0) return refuse(`${name} reaches back to seq ${s.floor}, the table of contents this session opened with; its chapters are carried already. Start after seq ${s.floor}. Nothing was archived.`);
    if (r.startSeq <= prevEnd && i > 0) return refuse(`${name} overlaps or precedes the range before it (which ends at seq ${prevEnd}); give ranges ascending and without overlap. Nothing was archived.`);
    if (!s.events.some((e) => e.seq >= r.startSeq && e.seq <= r.endSeq)) return refuse(`${name} holds no events of this session. Nothing was archived.`);
    prevEnd = r.endSeq;
  }
  return undefined;
}

function checkText(req: ContinueRequest): Refusal | undefined {
  const fields: [string, string | undefined][] = [['handoffNote', req.note], ['title', req.title]];
  req.ranges.forEach((r, i) => fields.push([`chapters[${i}].title`, r.title], [`chapters[${i}].summary`, r.summary]));
  for (const [field, value] of fields) {
    const problem = value === undefined ? undefined : textProblem(field, value);
    if (problem) return refuse(`${problem}. Nothing was archived.`);
  }
  return req.ranges.some((r) => !r.title.trim()) ? refuse('every chapter needs a title. Nothing was archived.') : undefined;
}

function renderRange(store: Store, s: SessionState, range: RangeInput, at: number): Rendered {
  const light = s.events.filter((e) => e.seq >= range.startSeq && e.seq <= range.endSeq);
  const events: FullEvent[] = light.map((e) => ({ ...e, full: fullText(store, e) }));
  const id = `ch_${newId(at)}`;
  const topics = topicsOf(s.session, light);
  const markdown = renderChapter({ id, title: range.title, summary: range.summary, session: s.session, startSeq: range.startSeq, endSeq: range.endSeq }, events);
  const times = light.map((e) => e.at).filter((t): t is number => t !== null);
  const record: ChapterRecord = {
    id,
    sessionId: s.session.id,
    startSeq: range.startSeq,
    endSeq: range.endSeq,
    title: range.title,
    summary: range.summary,
    sha256: sha256(markdown),
    tokens: countTokens(markdown),
    bytes: Buffer.byteLength(markdown, 'utf8'),
    events: events.length,
    topics,
    firstAt: times.length ? Math.min(...times) : null,
    lastAt: times.length ? Math.max(...times) : null,
    indexText: indexTextOf({ title: range.title, summary: range.summary, topics }, events),
  };
  // A chapter's plan is where its plan stood at the chapter's end: its last plan call.
  const byText = new Map(events.map((e) => [e.seq, e.full]));
  const detected = detectPlans(light, (e) => byText.get(e.seq) ?? e.text, (e) => countTokens(byText.get(e.seq) ?? e.text));
  const last = detected[detected.length - 1];
  // Earlier calls rewrite the same plan; their steps stay findable through the final record.
  const steps = [...new Set(detected.flatMap((p) => p.outline.map((l) => l.replace(/^\[.\] /, ''))))];
  const plans = last ? [planRecord(last, { chapter: id, session: s.session.id, at: light.find((e) => e.seq === last.seq)?.at ?? null, steps }, at)] : [];
  return { record, markdown, plans };
}

function planRecord(p: DetectedPlan, where: { chapter: string; session: string; at: number | null; steps: string[] }, now: number): { record: PlanRecord; markdown: string } {
  const id = `plan_${newId(now)}`;
  const markdown = renderPlan(p, { plan: id, chapter: where.chapter, session: where.session });
  return {
    record: {
      id, chapterId: where.chapter, sessionId: where.session, seq: p.seq, resultSeq: p.resultSeq, toolName: p.toolName,
      title: p.title, status: p.status, outline: p.outline, verdict: p.verdict, sha256: sha256(markdown), tokens: countTokens(markdown), at: where.at,
      indexText: [p.title, p.status, p.toolName, ...p.outline, p.verdict, ...where.steps].join('\n'),
    },
    markdown,
  };
}

function pick(c: { id: string; title: string; summary: string; startSeq: number; endSeq: number; sha256: string; tokens: number }) {
  return { id: c.id, title: c.title, summary: c.summary, startSeq: c.startSeq, endSeq: c.endSeq, sha256: c.sha256, tokens: c.tokens };
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
