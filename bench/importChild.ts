import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { openServices, type Services } from '../src/core/services';
import { emptyReport } from '../src/core/history/importer';
import { ImportPipeline } from '../src/core/history/importPipeline';
import { PendingSyncs } from '../src/core/history/pendingSyncs';
import { queryScalar, sqliteHeapBytes } from '../src/core/store/sqlite';
import { PagedFrame } from '../src/core/store/pagedFrame';
import { gc, kernelPeakRss, MemorySampler } from './memorySampler';
import { Profiler } from './profiler';
import { nowMs, progress } from './stats';
import { folderSize } from './transcripts';

/**
 * Section 4's measured import, run in a fresh process (`--child import <home> <root>`) so its
 * peak memory is the import's alone: HistoryImporter.importPaths over each copy folder in turn,
 * with exclusive-time frames around the steps an import takes (bench/profiler.ts).
 */

export interface ImportFigures {
  importMs: number;
  /** The summary DAG build that `recollect import` runs after the import (`lcm.buildAll`). */
  dagMs: number;
  closeMs: number;
  openMs: number;
  files: number;
  sessions: number;
  runs: number;
  events: number;
  problems: number;
  storedSessions: number;
  storedEvents: number;
  peakRss: number;
  kernelPeakRss: number | null;
  peakHeapUsed: number;
  peakArrayBuffers: number;
  heapAfterGc: number;
  rssAfterImport: number;
  /** `sealed`: the journal's sealed segments (journal.sealed/), measured once the seal after the close has finished. */
  sizes: { snapshot: number; journal: number; sealed?: number; blobs: number; blobFiles: number };
  /** The seal run after the close's checkpoint (as the idle checkpoint's would), outside the timed import; null when nothing was sealed. */
  seal?: { ms: number; buildMs: number; swapMs: number; sealedBytes: number; segmentBytes: number } | null;
  blobs: { puts: number; putBytes: number; distinct: number };
  frames: Record<string, { ms: number; calls: number }>;
  fsyncs: number;
  /**
   * Journal syncs left running on the thread pool while the next file is worked on: requests
   * (one per file), the fdatasyncs actually run (requests made while one runs share the next),
   * and the requests' summed latency (it overlaps the frames).
   */
  backgroundSyncs: { calls: number; fdatasyncs: number; ms: number };
  /** fsyncs of blob files and their folders run on the thread pool while the next files are parsed (counted, not timed: they overlap the frames). */
  blobSyncs?: { fsyncs: number };
}

interface Internals {
  journal: { append(op: unknown): number; sync(): Promise<void>; startSync(): Promise<void> };
  lock: { withLock<T>(fn: () => T): Promise<T> };
  ops: { appliers: Map<string, (db: unknown, op: unknown) => void> };
}

export function copyFolders(root: string): string[] {
  return fs.readdirSync(root).filter((d) => d.startsWith('copy-')).sort().map((d) => path.join(root, d));
}

export async function importChild(home: string, root: string, wasmPath: string): Promise<ImportFigures> {
  const mem = new MemorySampler().start();
  const t0 = nowMs();
  // RECOLLECT_BENCH_TRACE=1: the process's memory by part every half second on stderr (attribution runs only).
  if (process.env.RECOLLECT_BENCH_TRACE) {
    const trace = setInterval(() => {
      const m = process.memoryUsage();
      const f = (b: number) => (b / 1048576).toFixed(0);
      process.stderr.write(`trace ${((nowMs() - t0) / 1000).toFixed(1)} s rss ${f(m.rss)} heapUsed ${f(m.heapUsed)} heapTotal ${f(m.heapTotal)} external ${f(m.external)} arrayBuffers ${f(m.arrayBuffers)} wasm ${f(sqliteHeapBytes())}\n`);
    }, 500);
    trace.unref();
  }
  const s = await openServices({ home, wasmPath });
  const openMs = nowMs() - t0;
  if (process.env.RECOLLECT_BENCH_TRACE) {
    const st = s.store as unknown as { checkpointInBackground: () => Promise<void> };
    const idle = st.checkpointInBackground.bind(st);
    st.checkpointInBackground = async () => {
      process.stderr.write(`trace ${((nowMs() - t0) / 1000).toFixed(1)} s idle checkpoint starts\n`);
      try {
        return await idle();
      } finally {
        process.stderr.write(`trace ${((nowMs() - t0) / 1000).toFixed(1)} s idle checkpoint ends\n`);
      }
    };
  }
  const prof = new Profiler();
  const { blobs, backgroundSyncs, blobSyncs } = instrument(s, prof);
  const report = emptyReport();
  const dirs = copyFolders(root);
  const tImport = nowMs();
  for (const [i, dir] of dirs.entries()) {
    await s.importer.importPaths([dir], report);
    mem.sample();
    if ((i + 1) % Math.max(1, Math.round(dirs.length / 10)) === 0) {
      progress(`  import: ${i + 1}/${dirs.length} copies, ${report.events.toLocaleString('en-US')} events, ${((nowMs() - tImport) / 1000).toFixed(1)} s, rss ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB, cpu ${cpuSeconds()} s`);
    }
  }
  const importMs = nowMs() - tImport;
  const peakMb = () => `${((kernelPeakRss() ?? 0) / 1048576).toFixed(0)} MB, cpu ${cpuSeconds()} s`;
  progress(`  import: done, peak RSS so far ${peakMb()}`);
  const db = s.store.db;
  const storedSessions = Number(queryScalar(db, 'SELECT count(*) FROM sessions'));
  const storedEvents = Number(queryScalar(db, 'SELECT count(*) FROM events'));
  gc();
  const heapAfterGc = process.memoryUsage().heapUsed;
  const rssAfterImport = process.memoryUsage().rss;
  const frames = prof.toJSON();
  // `recollect import` builds the summary DAG before its checkpoint; timed apart from the import.
  const tDag = nowMs();
  const summaries = await s.lcm.buildAll();
  const dagMs = nowMs() - tDag;
  progress(`  import: summary DAG ${(dagMs / 1000).toFixed(1)} s (${JSON.stringify(summaries)}), rss ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB, peak RSS so far ${peakMb()}`);
  const tClose = nowMs();
  s.store.checkpoint(); // what close() does here: the journal tail is far over its 1 MB threshold
  const closeMs = nowMs() - tClose;
  progress(`  import: checkpoint ${(closeMs / 1000).toFixed(1)} s, peak RSS so far ${peakMb()}`);
  // The background seal that follows a checkpoint, awaited so the sizes below count its result.
  const tSeal = nowMs();
  const sealed = await s.store.sealJournal();
  const seal = sealed ? { ms: nowMs() - tSeal, buildMs: sealed.buildMs, swapMs: sealed.swapMs, sealedBytes: sealed.sealedBytes, segmentBytes: sealed.segmentBytes } : null;
  progress(`  import: seal done, peak RSS so far ${peakMb()}`);
  s.store.close();
  mem.stop();
  const blobFolder = folderSize(path.join(home, 'blobs'));
  return {
    importMs, dagMs, closeMs, openMs,
    files: report.files, sessions: report.sessions, runs: report.runs, events: report.events, problems: report.problems.length,
    storedSessions, storedEvents,
    peakRss: mem.peakRss, kernelPeakRss: kernelPeakRss() ?? null, peakHeapUsed: mem.peakHeapUsed, peakArrayBuffers: mem.peakArrayBuffers,
    heapAfterGc, rssAfterImport,
    sizes: { snapshot: fileSize(path.join(home, 'store.sqlite')), journal: fileSize(path.join(home, 'journal.jsonl')), sealed: folderSize(path.join(home, 'journal.sealed')).bytes, blobs: blobFolder.bytes, blobFiles: blobFolder.files },
    seal,
    blobs,
    frames,
    fsyncs: Object.entries(frames).filter(([k]) => k.startsWith('fsync') || k.startsWith('fdatasync')).reduce((a, [, v]) => a + v.calls, 0) + backgroundSyncs.fdatasyncs + blobSyncs.fsyncs,
    backgroundSyncs,
    blobSyncs,
  };
}

/**
 * Frames around every step of an import. Private members are reached by name: this is a
 * measurement harness, and a renamed member fails loudly here rather than measuring nothing.
 */
function instrument(s: Services, prof: Profiler): Pick<ImportFigures, 'blobs' | 'backgroundSyncs'> & { blobSyncs: { fsyncs: number } } {
  const internals = s.store as unknown as Internals;
  const counts = { puts: 0, putBytes: 0, distinct: 0 };
  const seen = new Set<string>();
  const put = s.store.blobs.putInBackground.bind(s.store.blobs);
  s.store.blobs.putInBackground = (content: string | Uint8Array) => {
    const pending = put(content);
    const hash = pending.hash;
    counts.puts++;
    counts.putBytes += typeof content === 'string' ? Buffer.byteLength(content) : content.length;
    if (!seen.has(hash)) {
      seen.add(hash);
      counts.distinct++;
    }
    return pending;
  };
  prof.wrapSync(s.store.blobs, 'putInBackground', 'blob put: sha256, start compress + write');
  // importPaths reads each file through readFile and journals it through commitFile.
  prof.wrapSync(s.importer, 'readFile', 'importFile: stat, read, detect, parse');
  prof.wrapAsync(s.importer, 'commitFiles', 'commit a batch: wait for its blobs on disk, report');
  // Per call, not per object: the pipeline and its syncs are made by each importPaths call.
  wrapPrototype(prof, ImportPipeline.prototype, 'turn', 'pipeline: event-loop turn for blob writes');
  wrapPrototype(prof, PendingSyncs.prototype, 'all', 'wait: last journal fsyncs of an importPaths call');
  prof.wrapSync(s.importer, 'prepareSession', 'prepareSession: keys, run ids, blobs');
  prof.wrapSync(s.importer, 'prepare', 'prepare: per-event sha256 + JSON');
  prof.wrapAsync(s.chapters, 'linkImported', 'chapters link hook');
  const withLock = internals.lock.withLock.bind(internals.lock);
  internals.lock.withLock = <T>(fn: () => T): Promise<T> => {
    prof.enter('lock file: acquire/release');
    return withLock(() => {
      prof.enter('decide: read existing keys, diff');
      try {
        return fn();
      } finally {
        prof.exit();
      }
    }).finally(() => prof.exit());
  };
  prof.wrapSync(internals.journal, 'append', 'journal append: stringify, deflate, write');
  // Not a frame: these run beside the import's own steps, so their time would overlap the rest.
  const backgroundSyncs = { calls: 0, fdatasyncs: 0, ms: 0 };
  const sync = internals.journal.sync.bind(internals.journal);
  internals.journal.sync = () => {
    const t = nowMs();
    backgroundSyncs.calls++;
    return sync().finally(() => (backgroundSyncs.ms += nowMs() - t));
  };
  const startSync = internals.journal.startSync.bind(internals.journal);
  internals.journal.startSync = () => {
    backgroundSyncs.fdatasyncs++;
    return startSync();
  };
  prof.wrapSync(s.store, 'checkpointUnderPressure', 'checkpoint under memory pressure');
  wrapPrototypeSync(prof, PagedFrame.prototype, 'load', 'snapshot chunk load: read, hash, decompress');
  prof.wrapSync(s.store, 'refresh', 'catch-up: fstat (+ read other writers\' lines)');
  for (const [name, apply] of internals.ops.appliers) {
    internals.ops.appliers.set(name, (db, op) => {
      prof.enter(`apply ${name}`);
      try {
        apply(db, op);
      } finally {
        prof.exit();
      }
    });
  }
  // The store reaches node:fs through the module object, so the sync calls can be timed there.
  const nodeFs = createRequire(__filename)('node:fs') as Record<string, unknown>;
  prof.wrapSync(nodeFs, 'fsyncSync', () => `fsync (${prof.current?.startsWith('blob') ? 'blob file + folder' : 'other'})`);
  prof.wrapSync(nodeFs, 'fdatasyncSync', 'fdatasync (journal)');
  const blobSyncs = { fsyncs: 0 };
  const fsync = nodeFs.fsync as (fd: number, cb: (err: Error | null) => void) => void;
  nodeFs.fsync = (fd: number, cb: (err: Error | null) => void) => {
    blobSyncs.fsyncs++;
    fsync(fd, cb);
  };
  return { blobs: counts, backgroundSyncs, blobSyncs };
}

function wrapPrototype(prof: Profiler, proto: object, key: string, name: string): void {
  const target = proto as Record<string, (this: unknown, ...args: unknown[]) => Promise<unknown>>;
  const orig = target[key];
  if (typeof orig !== 'function') throw new Error(`profiler: ${key} is not a method`);
  target[key] = function (this: unknown, ...args: unknown[]) {
    prof.enter(name);
    return orig.apply(this, args).finally(() => prof.exit());
  };
}

function wrapPrototypeSync(prof: Profiler, proto: object, key: string, name: string): void {
  const target = proto as Record<string, (this: unknown, ...args: unknown[]) => unknown>;
  const orig = target[key];
  if (typeof orig !== 'function') throw new Error(`profiler: ${key} is not a method`);
  target[key] = function (this: unknown, ...args: unknown[]) {
    prof.enter(name);
    try {
      return orig.apply(this, args);
    } finally {
      prof.exit();
    }
  };
}

/** The process's CPU time so far (user + system): on a shared machine it varies far less with the load than the wall time. */
function cpuSeconds(): string {
  const { user, system } = process.cpuUsage();
  return ((user + system) / 1e6).toFixed(1);
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
