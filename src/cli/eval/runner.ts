import { Bm25Baseline } from './bm25Baseline';
import { ask, describeSystems, SYSTEMS, type AskSettings, type SystemName } from './askQuestion';
import { loadConversation } from './conversationStore';
import type { EvalDataset } from './dataset';
import { RecallTally, type RecallFigures } from './recall';

export interface RunOptions extends AskSettings {
  wasmPath: string;
  /** Where the build put the bundled embedding model (beside the CLI's bundle). */
  modelDistDir: string;
  /** Evaluate only the first n conversations. */
  limit?: number | undefined;
  /** Told after each conversation, for a progress line on stderr. */
  progress?: (done: number, total: number) => void;
}

type PerSystem<T> = Record<SystemName, T>;

export interface DatasetReport {
  format: EvalDataset['format'];
  conversations: number;
  turns: number;
  entries_written: number;
  turns_refused: number;
  questions: number;
  questions_evaluated: number;
  skipped_no_evidence: number;
  systems: PerSystem<string>;
  recall: PerSystem<RecallFigures>;
  by_type?: Record<string, PerSystem<RecallFigures>>;
  /** Questions a system refused (counted as retrieving nothing) and the first reason. */
  refusals: PerSystem<{ count: number; first?: string }>;
  /** Mean ranked items per reply: get_context fills a token budget, so it may hold fewer than k. */
  mean_items: PerSystem<number>;
  timing_ms: { write_turn_median: number; ask_median: PerSystem<number>; ask_p95: PerSystem<number> };
  problems: string[];
  more_problems?: number;
}

/** Loads each conversation into its own fresh store, asks its questions of every system, and scores them. */
export async function runDataset(dataset: EvalDataset, opts: RunOptions): Promise<DatasetReport> {
  const conversations = dataset.conversations.slice(0, opts.limit ?? dataset.conversations.length);
  const overall = perSystem(() => new RecallTally());
  const byType = new Map<string, PerSystem<RecallTally>>();
  const refusals = perSystem((): { count: number; first?: string } => ({ count: 0 }));
  const items = perSystem(() => 0);
  const askMs = perSystem((): number[] => []);
  const writeMs: number[] = [];
  let turns = 0;
  let entries = 0;
  let refusedTurns = 0;
  let questions = 0;
  let skipped = 0;
  const problems = [...dataset.problems];

  for (const [i, conv] of conversations.entries()) {
    const loaded = await loadConversation(conv, opts.wasmPath, opts.modelDistDir);
    try {
      turns += conv.turns.length;
      entries += loaded.entries;
      refusedTurns += loaded.refusedTurns.length;
      writeMs.push(...loaded.writeMs);
      for (const r of loaded.refusedTurns) problems.push(`${conv.id}: turn ${r.key} was refused by remember_note: ${r.reason}`);
      const baseline = new Bm25Baseline();
      for (const [key, text] of loaded.turnText) baseline.add(key, text);
      for (const q of conv.questions) {
        questions++;
        if (!q.evidence.length) {
          skipped++;
          continue;
        }
        const typeTally = q.type === undefined ? undefined : tallyFor(byType, q.type);
        for (const system of SYSTEMS) {
          const answer = await ask(system, q, loaded, baseline, opts);
          overall[system].add(answer.ranked, q.evidence);
          typeTally?.[system].add(answer.ranked, q.evidence);
          items[system] += answer.ranked.length;
          askMs[system].push(answer.ms);
          if (answer.refused !== undefined) {
            refusals[system].count++;
            refusals[system].first ??= `${q.id}: ${answer.refused}`;
          }
        }
      }
    } finally {
      loaded.close();
    }
    opts.progress?.(i + 1, conversations.length);
  }

  const evaluated = questions - skipped;
  return {
    format: dataset.format,
    conversations: conversations.length,
    turns,
    entries_written: entries,
    turns_refused: refusedTurns,
    questions,
    questions_evaluated: evaluated,
    skipped_no_evidence: skipped,
    systems: describeSystems(opts),
    recall: mapSystems(overall, (t) => t.figures()),
    ...(byType.size ? { by_type: Object.fromEntries([...byType].sort(([a], [b]) => a.localeCompare(b)).map(([type, t]) => [type, mapSystems(t, (x) => x.figures())])) } : {}),
    refusals,
    mean_items: mapSystems(items, (n) => (evaluated ? Math.round((n / evaluated) * 100) / 100 : 0)),
    timing_ms: { write_turn_median: median(writeMs), ask_median: mapSystems(askMs, median), ask_p95: mapSystems(askMs, (xs) => quantile(xs, 0.95)) },
    problems: problems.slice(0, 20),
    ...(problems.length > 20 ? { more_problems: problems.length - 20 } : {}),
  };
}

function tallyFor(byType: Map<string, PerSystem<RecallTally>>, type: string): PerSystem<RecallTally> {
  let t = byType.get(type);
  if (!t) byType.set(type, (t = perSystem(() => new RecallTally())));
  return t;
}

function perSystem<T>(make: () => T): PerSystem<T> {
  return Object.fromEntries(SYSTEMS.map((s) => [s, make()])) as PerSystem<T>;
}

function mapSystems<T, U>(values: PerSystem<T>, fn: (v: T) => U): PerSystem<U> {
  return Object.fromEntries(SYSTEMS.map((s) => [s, fn(values[s])])) as PerSystem<U>;
}

export function median(xs: readonly number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const m = s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
  return Math.round(m * 100) / 100;
}

/** The nearest-rank quantile (p95: the value 95% of the asks took at most). */
export function quantile(xs: readonly number[], q: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const v = s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
  return Math.round(v * 100) / 100;
}
