import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { Services } from '../src/core/services';
import type { RememberInput } from '../src/core/memory/memoryService';
import { Rng } from './rng';
import { median, nowMs, percentile } from './stats';

/** The floor under any durable write: append one journal-sized line and fdatasync it. */
export function fsyncBaseline(dir: string, n: number, lineBytes = 400): number[] {
  const file = path.join(dir, 'fsync-baseline.jsonl');
  const fd = fs.openSync(file, 'a');
  const line = Buffer.from(`${'x'.repeat(lineBytes - 1)}\n`);
  const out: number[] = [];
  try {
    for (let i = 0; i < n + 20; i++) {
      const t = nowMs();
      fs.writeSync(fd, line);
      fs.fdatasyncSync(fd);
      if (i >= 20) out.push(nowMs() - t);
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  return out;
}

/** What agents send to remember: mostly short notes, a quarter facts with the sentence behind them. */
export function rememberInputs(n: number, rng: Rng, statement: () => string, factWords: readonly string[]): RememberInput[] {
  const out: RememberInput[] = [];
  for (let i = 0; i < n; i++) {
    const text = statement();
    if (rng.chance(0.25)) {
      const subject = `${rng.pick(factWords)} ${rng.pick(factWords)}`;
      out.push({ statement: text, subject, predicate: rng.pick(['is', 'uses', 'prefers', 'depends on']), object: `${rng.pick(factWords)} ${rng.int(1, 20)}` });
    } else {
      out.push({ statement: text });
    }
  }
  return out;
}

export interface RememberTimings {
  all: number[];
  notes: number[];
  facts: number[];
}

export async function rememberBench(services: Services, inputs: RememberInput[], warmup: number): Promise<RememberTimings> {
  const t: RememberTimings = { all: [], notes: [], facts: [] };
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i] as RememberInput;
    const t0 = nowMs();
    const r = await services.memory.remember(input, 'bench');
    const dt = nowMs() - t0;
    if (!r.ok) throw new Error(`remember refused: ${JSON.stringify(r).slice(0, 200)}`);
    if (i < warmup) continue;
    t.all.push(dt);
    (input.subject !== undefined ? t.facts : t.notes).push(dt);
  }
  return t;
}

export function snapshotSize(home: string): number {
  return fs.statSync(path.join(home, 'store.sqlite')).size;
}

export interface ColdOpen {
  open: number[];
  firstQuery: number[];
  openPlusQuery: number[];
  read: number[];
  childWall: number[];
}

/**
 * Cold open in fresh processes: `node dist/bench.js --child open <home>` times openServices to
 * the end of a first search; `--child read <file>` times fs.readFileSync of the snapshot.
 * Both run on a warm page cache (it cannot be dropped here without root).
 */
export function coldOpenBench(benchScript: string, home: string, query: string, runs: number): ColdOpen {
  const out: ColdOpen = { open: [], firstQuery: [], openPlusQuery: [], read: [], childWall: [] };
  const child = (args: string[]) => {
    const t = nowMs();
    const r = spawnSync(process.execPath, [benchScript, '--child', ...args], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const wall = nowMs() - t;
    if (r.status !== 0) throw new Error(`child ${args.join(' ')} failed: ${r.stderr}`);
    const line = r.stdout.trim().split('\n').pop() ?? '{}';
    const data = JSON.parse(line) as Record<string, number>;
    return { readMs: data.readMs ?? NaN, openMs: data.openMs ?? NaN, queryMs: data.queryMs ?? NaN, wall };
  };
  for (let i = 0; i < runs; i++) {
    const read = child(['read', path.join(home, 'store.sqlite')]);
    out.read.push(read.readMs);
    const open = child(['open', home, query]);
    out.open.push(open.openMs);
    out.firstQuery.push(open.queryMs);
    out.openPlusQuery.push(open.openMs + open.queryMs);
    out.childWall.push(open.wall);
  }
  return out;
}

export function summarize(samples: number[]): { p50: number; p99: number } {
  return { p50: median(samples), p99: percentile(samples, 99) };
}
