import * as fs from 'node:fs';
import { compactSnapshot, type CompactedFile } from './compactionJob';
import { loadSqlJs } from './sqlite';

/** What compaction.ts sends the child process (its only message). */
export interface CompactionRequest {
  wasmPath: string;
  snapshotFile: string;
  out: string;
}

/** The child's one reply; `maxRss` is the child's own peak (bytes), which the owner's RSS never shows. */
export type CompactionReply = { ok: true; result: CompactedFile; maxRss: number } | { ok: false; error: string; maxRss: number };

/**
 * The compaction's child process (bundled as dist/compactWorker.js, started by compaction.ts with
 * child_process.fork and `--expose-gc`): the job needs about two copies of the database at its
 * peak, and in a child that memory is never the owner's (in VS Code, the extension host every
 * extension shares), and all of it goes back to the system when the child exits. A full
 * collection between phases keeps the copies from adding up (each phase leaves a few hundred MB
 * of ArrayBuffers V8 would otherwise free later); without `gc` the same work runs at a higher peak.
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

process.once('message', (message: CompactionRequest) => {
  request = message;
  const maxRss = () => process.resourceUsage().maxRSS * 1024;
  loadSqlJs(message.wasmPath)
    .then((SQL) => compactSnapshot(SQL, message.snapshotFile, message.out, { collectGarbage }))
    // The job runs for seconds without an event-loop turn, so an owner that died meanwhile is only noticed here.
    .then((result) => (process.connected ? reply({ ok: true, result, maxRss: maxRss() }) : abandon()))
    .catch((err: unknown) => reply({ ok: false, error: err instanceof Error ? err.message : String(err), maxRss: maxRss() }));
});
process.once('disconnect', abandon);
