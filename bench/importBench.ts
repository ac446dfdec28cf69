import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { BenchContext } from './context';
import { defaultFixturesDir } from './corpus';
import type { ImportFigures } from './importChild';
import type { NativeFigures } from './nativeImport';
import { RETURNING_MALLOC_ENV } from '../src/core/store/memoryBudget';
import { Rng } from './rng';
import { heading, mb, ms, note, nowMs, progress, ratio, result, table } from './stats';
import { replicateTranscripts, type ReplicatedTranscripts } from './transcripts';

/**
 * Section 4: history import over ≥ 100 MB of transcripts (copies of the real fixtures with
 * fresh ids), in a fresh process, against a native better-sqlite3 import of the same events.
 */

export interface ImportStage {
  home: string;
  raw: ReplicatedTranscripts;
  ours: ImportFigures;
  native: NativeFigures | undefined;
  replicateMs: number;
}

const MiB = 1024 * 1024;

/** Writes the transcripts and imports them (the store is left closed at `home` for section 5). */
export function runImport(ctx: BenchContext, withBaseline: boolean, targetMb: number): ImportStage {
  const root = path.join(ctx.tmp, `transcripts-${targetMb}`);
  const home = path.join(ctx.tmp, `imported-${targetMb}`);
  // --reuse: an earlier --keep run's import (its figures saved beside it) saves minutes per lcm iteration.
  const saved = path.join(ctx.tmp, `stage-${targetMb}.json`);
  if (ctx.reuse && !withBaseline && fs.existsSync(saved) && fs.existsSync(home)) {
    progress(`import: reusing ${home} (--reuse)`);
    return JSON.parse(fs.readFileSync(saved, 'utf8')) as ImportStage;
  }
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(home, { recursive: true, force: true });
  const fixtures = defaultFixturesDir();
  progress(`import: writing ${targetMb} MB of transcripts (copies of ${fixtures} with fresh ids)`);
  const tr = nowMs();
  const raw = replicateTranscripts(fixtures, root, targetMb * MiB, new Rng(ctx.seed + 40), (c, b) => progress(`  ${c} copies, ${mb(b)}`), process.argv.includes('--verbatim-copies'));
  const replicateMs = nowMs() - tr;
  progress(`import: ${raw.files} files, ${mb(raw.bytes)}; HistoryImporter.importPaths in a fresh process`);
  // In the environment `recollect import` gives itself on Linux (src/cli/mallocRelaunch.ts).
  const ours = runChild<ImportFigures>(ctx, ['import', home, root], process.platform === 'linux' ? RETURNING_MALLOC_ENV : {});
  let native: NativeFigures | undefined;
  if (withBaseline) {
    progress('import: the same files into better-sqlite3 (native SQLite + FTS5) in a fresh process');
    native = runChild<NativeFigures>(ctx, ['native-import', path.join(ctx.tmp, 'native-import.sqlite'), root]);
    fs.rmSync(path.join(ctx.tmp, 'native-import.sqlite'), { force: true });
  }
  const stage = { home, raw, ours, native, replicateMs };
  fs.writeFileSync(saved, JSON.stringify(stage));
  return stage;
}

/** Removes a stage's transcripts and store (a 1 GB stage should not sit on disk while the next section runs). */
export function dropImport(stage: ImportStage): void {
  fs.rmSync(stage.raw.root, { recursive: true, force: true });
  fs.rmSync(stage.home, { recursive: true, force: true });
}

/** Runs `dist/bench.js --child <args> <wasm>` and returns the JSON line it prints last. */
export function runChild<T>(ctx: BenchContext, args: string[], env: Record<string, string> = {}): T {
  const r = spawnSync(process.execPath, ['--expose-gc', ctx.script, '--child', ...args, ctx.wasm], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * MiB,
  });
  if (r.status !== 0) throw new Error(`child ${args[0]} failed with status ${r.status}`);
  const line = r.stdout.trim().split('\n').pop() ?? '{}';
  return JSON.parse(line) as T;
}

export function printImport(ctx: BenchContext, stage: ImportStage): void {
  const { raw, ours, native } = stage;
  heading(`4. history import of ${mb(raw.bytes)} of transcripts (HistoryImporter.importPaths, real store) vs better-sqlite3`);
  note(`${raw.copies} copies of the ${raw.fixtureFiles} fixture transcripts (${(raw.fixtureBytes / 1024).toFixed(0)} KB), every UUID replaced per copy: ${raw.files.toLocaleString('en-US')} files, written in ${ms(stage.replicateMs)} (not timed below).`);
  note(`ours runs in a fresh process (node --expose-gc${process.platform === 'linux' ? ', MALLOC_MMAP_THRESHOLD_=131072 as `recollect import` sets it' : ''}), one importPaths call per copy folder, into an empty store; the store is closed (checkpointed) at the end.`);
  const perCopy = ours.sessions / raw.copies;
  result('files / sessions / runs / events imported', `${ours.files.toLocaleString('en-US')} / ${ours.sessions.toLocaleString('en-US')} / ${ours.runs.toLocaleString('en-US')} / ${ours.events.toLocaleString('en-US')}`);
  result('distinct sessions stored (copies × per copy)', `${ours.storedSessions.toLocaleString('en-US')} (${raw.copies} × ${perCopy.toFixed(1)})`, 'every copy distinct', ours.storedSessions === ours.sessions);
  result('events stored / problems reported', `${ours.storedEvents.toLocaleString('en-US')} / ${ours.problems}`);
  const rate = ours.events / (ours.importMs / 1000);
  result('import wall time (importPaths)', ms(ours.importMs));
  result('import throughput', `${Math.round(rate).toLocaleString('en-US')} events/s`);
  result('  raw bytes per second', `${mb(raw.bytes / (ours.importMs / 1000))}/s`);
  if (ours.backgroundSyncs?.calls) {
    const { calls, fdatasyncs, ms: syncMs } = ours.backgroundSyncs;
    result('journal syncs beside the next file: requested / fdatasyncs run', `${calls.toLocaleString('en-US')} / ${fdatasyncs.toLocaleString('en-US')} (${ms(syncMs / calls)} until on disk)`);
  }
  if (ours.blobSyncs) result('blob fsyncs (file + folder) on the thread pool beside the next files', ours.blobSyncs.fsyncs.toLocaleString('en-US'));
  result('close: checkpoint (export + write + fsync)', ms(ours.closeMs));
  result('throughput including the close', `${Math.round(ours.events / ((ours.importMs + ours.closeMs) / 1000)).toLocaleString('en-US')} events/s`);
  result('peak RSS (kernel VmHWM / sampled)', `${mb(ours.kernelPeakRss ?? NaN)} / ${mb(ours.peakRss)}`);
  result('peak JS heap used (sampled)', mb(ours.peakHeapUsed));
  result('peak ArrayBuffers (sql.js database + wasm heap)', mb(ours.peakArrayBuffers));
  result('after import: RSS / JS heap after gc', `${mb(ours.rssAfterImport)} / ${mb(ours.heapAfterGc)}`);
  const { snapshot, journal, blobs, blobFiles } = ours.sizes;
  const sealed = ours.sizes.sealed ?? 0;
  const total = snapshot + journal + sealed + blobs;
  const frac = total / raw.bytes;
  result('store on disk after close', mb(total));
  result('  store.sqlite (snapshot)', `${mb(snapshot)} (${pct(snapshot / raw.bytes)})`);
  result('  journal.jsonl (live)', `${mb(journal)} (${pct(journal / raw.bytes)})`);
  result('  journal.sealed (segments)', `${mb(sealed)} (${pct(sealed / raw.bytes)})`);
  if (ours.seal) {
    const sl = ours.seal;
    result('seal after the close (not timed above): build + compress / swap', `${ms(sl.ms)}: ${ms(sl.buildMs)} / ${ms(sl.swapMs)}; ${mb(sl.sealedBytes)} → ${mb(sl.segmentBytes)} (${pct(sl.segmentBytes / sl.sealedBytes)})`);
  }
  result(`  blobs (${blobFiles.toLocaleString('en-US')} files)`, `${mb(blobs)} (${pct(blobs / raw.bytes)})`);
  result('store size / raw transcript bytes', pct(frac), '≤ 25%', frac <= 0.25);
  const shared = ours.blobs.puts - ours.blobs.distinct;
  note(`blob puts ${ours.blobs.puts.toLocaleString('en-US')} (${mb(ours.blobs.putBytes)} before compression), distinct ${ours.blobs.distinct.toLocaleString('en-US')}${shared > 0 ? `: ${shared.toLocaleString('en-US')} repeated large outputs were stored once` : ''}.`);
  const blobSync = ours.frames['fsync (blob file + folder)'];
  if (blobSync && ours.blobs.distinct && shared > 0) {
    // Only a corpus whose copies share large outputs needs this caveat.
    const perBlob = blobSync.ms / ours.blobs.distinct;
    const extra = (shared * perBlob) / 1000;
    note(`real transcripts rarely repeat a large output: had all ${ours.blobs.puts.toLocaleString('en-US')} been distinct, at the measured ${ms(perBlob)} of fsyncs per new blob (file + folder) the import would take ~${extra.toFixed(1)} s more (${Math.round(ours.events / (ours.importMs / 1000 + extra)).toLocaleString('en-US')} events/s) — an estimate, not measured.`);
  }
  ctx.verdicts.push(['import: store size ≤ 25% of raw bytes', frac <= 0.25]);
  if (native) {
    const nrate = native.events / (native.wallMs / 1000);
    const r = rate / nrate;
    result('better-sqlite3 import wall time', ms(native.wallMs));
    result('better-sqlite3 throughput', `${Math.round(nrate).toLocaleString('en-US')} events/s`);
    result('  of which parse (read + detect + same parsers)', ms(native.parseMs));
    result('  of which prepare (keys, sha256, JSON)', ms(native.prepareMs));
    result('  of which SQL (one transaction per file + fsync)', ms(native.sqlMs));
    result('better-sqlite3 close (WAL checkpoint)', ms(native.closeMs));
    result('better-sqlite3 events / peak RSS (VmHWM)', `${native.events.toLocaleString('en-US')} / ${mb(native.kernelPeakRss ?? native.peakRss)}`);
    result('better-sqlite3 file size / raw bytes', `${mb(native.dbBytes)} (${pct(native.dbBytes / raw.bytes)})`);
    result('import rate ours / better-sqlite3', ratio(r), '≥ 0.50×', r >= 0.5);
    ctx.verdicts.push(['import rate ≥ 0.5× better-sqlite3', r >= 0.5]);
    if (native.events !== ours.events) note(`event counts differ: ours ${ours.events}, better-sqlite3 ${native.events}`);
  }
  console.log('');
  note('where the import time goes (exclusive time per step: a step\'s time minus the steps it called; bench/profiler.ts):');
  const frames = Object.entries(ours.frames).sort((a, b) => b[1].ms - a[1].ms);
  const framed = frames.reduce((a, [, v]) => a + v.ms, 0);
  table(
    ['step', 'calls', 'time', 'share', 'per call'],
    [
      ...frames.map(([k, v]) => [k, v.calls.toLocaleString('en-US'), ms(v.ms), pct(v.ms / ours.importMs), ms(v.ms / v.calls)]),
      ['outside these steps (folder walk, sampling)', '', ms(ours.importMs - framed), pct((ours.importMs - framed) / ours.importMs), ''],
    ],
  );
  if (native) note(`parse alone, the same parsers over the same files (measured in the baseline process): ${ms(native.parseMs)} — part of "importFile" above.`);
}

function pct(v: number): string {
  return Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : 'n/a';
}
