import type { Store } from '../store/store';
import { queryRows } from '../store/sqlite';
import type { DecisionModel } from './decisionModel';
import type { CurrentSession } from './historyService';
import { judgeRuns, oneLine, type Judgement, type RunExcerpt } from './withholdJudge';
import { recordWithheld, withheldIn } from './withheldRuns';

/** The spec's thresholds: shorter runs cost too little to be worth a model call; below this confidence a run stays. */
export const WITHHOLD_MIN_CHARS = 4_096;
export const WITHHOLD_MIN_CONFIDENCE = 0.7;
const JUDGE_TIMEOUT_MS = 30_000;
const OBJECTIVE_CHARS = 160;

/** The part of a read run the judge and the note need. */
export interface ReadableRun {
  task_id: string;
  objective: string | null;
  events: readonly { kind: string; text: string; tool_name: string | null }[];
}

export interface WithheldNote {
  task_id: string;
  withheld: true;
  objective: string;
  chars: number;
  note: string;
}

export interface WithholdReport {
  /** True when a model's verdict was applied (or no run was long enough to need one). */
  checked: boolean;
  reason: string;
  model?: string;
  judgement_failed?: true;
  /** What "unrelated" was measured against: the newest run of this session. */
  current_request?: { session_id: string; how: string; task_id: string; text: string };
  judged?: { task_id: string; related: boolean; confidence: number }[];
  /** Runs replaced by a note in this answer. */
  ids?: string[];
  /** Runs returned in full because they were already withheld once in this session. */
  already_withheld?: string[];
}

export interface WithholdDeps {
  store: Store;
  model: DecisionModel | undefined;
  session: CurrentSession | undefined;
  timeoutMs?: number;
}

/**
 * Replaces each long run that the decision model judges unrelated to the current request with
 * a one-line note naming its objective, once per run per chat session. Without a model, or when
 * its answer is unusable, every run is returned in full and the report says why.
 */
export async function withholdUnrelated<T extends ReadableRun>(deps: WithholdDeps, runs: readonly T[]): Promise<{ runs: (T | WithheldNote)[]; report: WithholdReport }> {
  const kept = (report: WithholdReport) => ({ runs: [...runs], report });
  const { model, session, store } = deps;
  if (!model) return kept({ checked: false, reason: 'no decision model is available here (only VS Code has one), so nothing was withheld' });
  const off = model.unavailable();
  if (off) return kept({ checked: false, reason: `the decision model is not in use: ${off}; nothing was withheld` });
  if (!session) return kept({ checked: false, reason: 'no current session was found to judge against, so nothing was withheld' });
  const current = currentRequest(store, session.id);
  if (!current) return kept({ checked: false, reason: `the current session (${session.how}) has no request yet to judge against, so nothing was withheld` });

  const already = withheldIn(store.db, session.id, runs.map((r) => r.task_id));
  const sizes = new Map(runs.map((r) => [r.task_id, JSON.stringify(r).length]));
  const candidates = uniqueBy(runs, (r) => r.task_id).filter((r) => r.task_id !== current.task_id && !already.has(r.task_id) && (sizes.get(r.task_id) ?? 0) >= WITHHOLD_MIN_CHARS);
  const base = { model: model.describe(), current_request: { session_id: session.id, how: session.how, ...current }, already_withheld: [...already] };
  if (!candidates.length) return kept({ checked: true, ...base, judged: [], ids: [], reason: `no run needed judging: none was ${WITHHOLD_MIN_CHARS} characters or more and not already withheld once in this session` });

  const outcome = await judgeRuns(model, current.text, candidates.map(excerpt), deps.timeoutMs ?? JUDGE_TIMEOUT_MS);
  if (!outcome.ok) return kept({ checked: false, judgement_failed: true, ...base, reason: `the relevance judgement failed, so nothing was withheld: ${outcome.reason}` });

  const judged = candidates.flatMap((r) => {
    const j = outcome.judgements.get(r.task_id);
    return j ? [{ task_id: r.task_id, ...j }] : [];
  });
  const unrelated = judged.filter((j) => isUnrelated(j));
  const recorded = unrelated.length ? await recordWithheld(store, session.id, unrelated.map((j) => ({ runId: j.task_id, confidence: j.confidence })), model.describe()) : new Set<string>();
  const confidence = new Map(judged.map((j) => [j.task_id, j.confidence]));
  const out = runs.map((r) => (recorded.has(r.task_id) ? note(r, sizes.get(r.task_id) ?? 0, confidence.get(r.task_id) ?? 0) : r));
  const unjudged = candidates.length - judged.length;
  return {
    runs: out,
    report: {
      checked: true,
      ...base,
      judged,
      ids: [...recorded],
      reason:
        `${recorded.size} of ${candidates.length} long run${candidates.length === 1 ? '' : 's'} withheld as unrelated (confidence ≥ ${WITHHOLD_MIN_CONFIDENCE}); read a withheld run again to get it in full` +
        (unjudged ? `; ${unjudged} the model gave no verdict for ${unjudged === 1 ? 'was' : 'were'} kept` : ''),
    },
  };
}

function isUnrelated(j: Judgement): boolean {
  return !j.related && j.confidence >= WITHHOLD_MIN_CONFIDENCE;
}

/** The request now being worked on: the first message of this session's newest run. */
function currentRequest(store: Store, sessionId: string): { task_id: string; text: string } | undefined {
  const run = queryRows(store.db, 'SELECT id, objective FROM runs WHERE session_id = ? ORDER BY seq DESC LIMIT 1', [sessionId])[0];
  if (!run) return undefined;
  const user = queryRows(store.db, "SELECT text FROM events WHERE run_id = ? AND kind = 'user' ORDER BY seq LIMIT 1", [String(run.id)])[0];
  const text = String(user?.text ?? run.objective ?? '').trim();
  return text ? { task_id: String(run.id), text: oneLine(text, 1_500) } : undefined;
}

function excerpt(run: ReadableRun): RunExcerpt {
  const replies = run.events.filter((e) => e.kind === 'assistant' && e.text.trim());
  return {
    taskId: run.task_id,
    asked: run.events.find((e) => e.kind === 'user')?.text ?? run.objective ?? '',
    tools: [...new Set(run.events.flatMap((e) => (e.kind === 'tool_call' && e.tool_name ? [e.tool_name] : [])))],
    reply: replies[replies.length - 1]?.text ?? '',
  };
}

function note(run: ReadableRun, chars: number, confidence: number): WithheldNote {
  const objective = oneLine(run.objective ?? run.events.find((e) => e.kind === 'user')?.text ?? '', OBJECTIVE_CHARS) || '(the run has no request text)';
  return {
    task_id: run.task_id,
    withheld: true,
    objective,
    chars,
    note: `Withheld once as unrelated to the current request (confidence ${confidence.toFixed(2)}, ${chars} characters): run ${run.task_id} set out to "${objective}". Read it again with mode=read to get it in full.`,
  };
}

function uniqueBy<T>(items: readonly T[], key: (t: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((t) => (seen.has(key(t)) ? false : (seen.add(key(t)), true)));
}
