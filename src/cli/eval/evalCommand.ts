import * as path from 'node:path';
import { DatasetError } from './dataset';
import { readDatasetFile } from './formats/detect';
import { SYSTEMS } from './askQuestion';
import { RECALL_DEFINITION } from './recall';
import { runDataset, type DatasetReport } from './runner';

export const EVAL_USAGE = 'recollect eval [--max-tokens <128-4000>] [--limit <n>] <file>...';

/** get_context's own ceiling: the eval gives it the most room it allows, so the budget limits it least. */
const DEFAULT_MAX_TOKENS = 4000;

type FileReport = ({ file: string; ok: true } & DatasetReport) | { file: string; ok: false; error: string };

/**
 * `recollect eval`: JSON on stdout (one report per file), a readable summary on stderr.
 * Returns the exit code: 0 all files measured, 1 a file could not be read or measured, 2 usage.
 */
export async function evalCommand(args: string[], wasmPath: string): Promise<number> {
  const parsed = parseArgs(args);
  if (typeof parsed === 'string') {
    process.stderr.write(`${parsed}\nusage: ${EVAL_USAGE}\n`);
    return 2;
  }
  const files: FileReport[] = [];
  for (const file of parsed.files) {
    try {
      const dataset = readDatasetFile(file);
      const report = await runDataset(dataset, {
        wasmPath,
        modelDistDir: path.dirname(wasmPath),
        maxTokens: parsed.maxTokens,
        limit: parsed.limit,
        // A progress line only where a person watches; a log file would fill with carriage returns.
        ...(process.stderr.isTTY ? { progress: (done: number, total: number) => process.stderr.write(`\r${file}: ${done}/${total} conversations${done === total ? '\n' : ''}`) } : {}),
      });
      files.push({ file, ok: true, ...report });
    } catch (err) {
      if (!(err instanceof DatasetError)) throw err;
      files.push({ file, ok: false, error: err.message });
    }
  }
  process.stdout.write(JSON.stringify({ definition: RECALL_DEFINITION, files }, null, 2) + '\n');
  process.stderr.write(summary(files));
  return files.every((f) => f.ok) ? 0 : 1;
}

function parseArgs(args: string[]): { files: string[]; maxTokens: number; limit?: number } | string {
  const files: string[] = [];
  let maxTokens = DEFAULT_MAX_TOKENS;
  let limit: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--max-tokens' || a === '--limit') {
      const n = Number(args[++i]);
      if (!Number.isInteger(n) || n < 1) return `${a} needs a positive whole number`;
      if (a === '--limit') limit = n;
      else if (n < 128 || n > 4000) return '--max-tokens must be 128 to 4000 (get_context\'s range)';
      else maxTokens = n;
    } else if (a.startsWith('--')) return `unknown option ${a}`;
    else files.push(a);
  }
  if (!files.length) return 'no file given';
  return { files, maxTokens, ...(limit !== undefined ? { limit } : {}) };
}

function summary(files: FileReport[]): string {
  const lines: string[] = [];
  for (const f of files) {
    if (!f.ok) {
      lines.push(`${f.file}: ${f.error}`);
      continue;
    }
    lines.push(`${f.file} (${f.format}): ${f.questions_evaluated} of ${f.questions} questions evaluated over ${f.conversations} conversations, ${f.turns} turns`);
    lines.push(`  ${'system'.padEnd(22)}recall@5  recall@10  items/reply  ms p50  ms p95`);
    for (const s of SYSTEMS) {
      const r = f.recall[s];
      const t = f.timing_ms;
      lines.push(`  ${s.padEnd(22)}${pct(r['recall@5']).padEnd(10)}${pct(r['recall@10']).padEnd(11)}${String(f.mean_items[s]).padEnd(13)}${String(t.ask_median[s]).padEnd(8)}${t.ask_p95[s]}`);
    }
    if (f.by_type) {
      lines.push(`  recall@10 by question type: ${SYSTEMS.join(' / ')}`);
      for (const [type, per] of Object.entries(f.by_type)) lines.push(`    ${type.padEnd(20)}${SYSTEMS.map((s) => pct(per[s]['recall@10'])).join(' / ')}`);
    }
    const refused = SYSTEMS.filter((s) => f.refusals[s].count).map((s) => `${s} ${f.refusals[s].count}`);
    if (refused.length) lines.push(`  refused questions (counted as nothing retrieved): ${refused.join(', ')}`);
    if (f.turns_refused) lines.push(`  turns remember_note refused (counted as never retrieved): ${f.turns_refused}`);
  }
  return lines.join('\n') + '\n';
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}
