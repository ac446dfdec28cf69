import * as fs from 'node:fs';
import { isMainThread, Worker, workerData } from 'node:worker_threads';
import { compactSnapshot, type CompactedFile } from './compactionJob';
import { processMemory } from './memoryBudget';
import { loadSqlJs } from './sqlite';

/** What compaction.ts sends the child process (its only message). */
export interface CompactionRequest {
  wasmPath: string;
  snapshotFile: string;
  out: string;
  /** The chunk cache the source and the copy share (the owner's budget). */
  cacheBytes?: number;
}

/** The child's one reply; `maxRss` is the child's own peak (bytes), which the owner's RSS never shows. */
export type CompactionReply = { ok: true; result: CompactedFile; maxRss: number } | { ok: false; error: string; maxRss: number };

/**
 * The compaction's child process (bundled as dist/compactWorker.js, started by compaction.ts with
 * child_process.fork and `--expose-gc`): the job holds its two chunk caches and churns through
 * buffers for seconds, and in a child that memory is never the owner's (in VS Code, the extension
 * host every extension shares), and all of it goes back to the system when the child exits. A
 * full collection between phases frees what one phase left (the source's chunks before the copy
 * is checked and written) instead of letting it add to the next.
 */
const collectGarbage = typeof globalThis.gc === 'function' ? (globalThis.gc as () => void) : () => undefined;

function reply(message: CompactionReply): void {
  // Exit only once the reply is handed to the channel, or the owner sees a silent death.
  if (process.send) process.send(message, undefined, {}, () => process.exit(0));
  else process.exit(message.ok ? 0 : 1);
}

let request: CompactionRequest | undefined;

/** The owner went away (closed the store or died): nothing may outlive it, its temp file included. */
function abandon(): void {
  if (request) fs.rmSync(request.out, { force: true });
  process.exit(0);
}

/**
 * The job's phases (VACUUM INTO, the export, the encoding) each hold the main thread for seconds,
 * so neither 'disconnect' nor a check between phases notices an owner killed with -9 in time: the
 * child ran on for seconds and left a temp file the size of the snapshot. A thread of its own
 * looks every WATCH_MS whether the owner is still its parent (on Linux and macOS a dead owner's
 * children are handed to another process) and still exists (Windows keeps the old parent id),
 * and once it is not, removes the temp file and kills this process.
 */
const WATCH_MS = 100;

interface Watch {
  owner: number;
  out: string;
}

/** The watchdog thread: this same file, started as a worker thread, so it is typed and linted like the rest. */
function watchdog({ owner, out }: Watch): void {
  const ownerExists = () => {
    try {
      process.kill(owner, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== 'ESRCH';
    }
  };
  setInterval(() => {
    if (process.ppid === owner && ownerExists()) return;
    fs.rmSync(out, { force: true });
    process.kill(process.pid, 'SIGKILL');
  }, WATCH_MS);
}

function watchOwner(out: string): void {
  const watch: Watch = { owner: process.ppid, out };
  const thread = new Worker(__filename, { workerData: watch });
  thread.unref(); // never what keeps this process alive
}

function serveRequest(): void {
  process.once('message', (message: CompactionRequest) => {
    request = message;
    watchOwner(message.out);
    const maxRss = () => processMemory().peakRss;
    loadSqlJs(message.wasmPath)
      .then((SQL) => compactSnapshot(SQL, message.snapshotFile, message.out, { collectGarbage, ...(message.cacheBytes ? { cacheBytes: message.cacheBytes } : {}) }))
      // The job runs for seconds without an event-loop turn, so an owner that died meanwhile is only noticed here.
      .then((result) => (process.connected ? reply({ ok: true, result, maxRss: maxRss() }) : abandon()))
      .catch((err: unknown) => reply({ ok: false, error: err instanceof Error ? err.message : String(err), maxRss: maxRss() }));
  });
  process.once('disconnect', abandon);
}

if (isMainThread) serveRequest();
else watchdog(workerData as Watch);
