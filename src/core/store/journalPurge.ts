import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { syncFolder } from './durableFile';
import type { FileLock } from './fileLock';
import { parseOperation, type Operation } from './journalLine';
import { readHead } from './journalLive';
import { SEAL_LGWIN, SEAL_QUALITY } from './journalSeal';
import { listSegments, mayMention, redactedJson, redactSegment, type Redact } from './journalSegments';

export interface PurgeOptions {
  journalPath: string;
  sealedDir: string;
  lock: FileLock;
  /** Only lines that start before this logical offset are looked at (the operation that asked for the purge ends here). */
  upTo: number;
  redact: Redact;
}

export interface PurgeResult {
  /** Lines rewritten in sealed segments and in the live journal. */
  segmentLines: number;
  segmentsRewritten: number;
  liveLines: number;
  /** Lines that should have changed but were left as they were, and why (none in practice; reported, never hidden). */
  unpurged: string[];
}

/**
 * Rewrites the journal so that what `redact` removes is no longer on disk: every sealed segment
 * holding such a line is rebuilt and renamed over itself, and the live file is copied with those
 * lines replaced in place and renamed over journal.jsonl. Offsets never move: a segment keeps each
 * line's length in its index, and a live line's replacement is padded with spaces to its length,
 * so every process's position, the snapshot's offset and every segment name stay valid. A process
 * reading the old live file reads it to its end and then moves to the new one at the same offset,
 * as after a seal; a process that has not yet read a rewritten line reads the new one, which
 * replays to the same state once the operation behind the purge (later in the journal) is applied.
 */
export async function purgeJournal(opts: PurgeOptions): Promise<PurgeResult> {
  const result: PurgeResult = { segmentLines: 0, segmentsRewritten: 0, liveLines: 0, unpurged: [] };
  // The live file first: a seal that read its old bytes then fails its swap (it checks the file is
  // the one it read), and a seal that swapped before this point left a segment the loop below sees.
  await opts.lock.withLock(() => purgeLive(opts, result));
  for (const seg of listSegments(opts.sealedDir)) {
    if (seg.start >= opts.upTo) continue;
    const rewritten = await redactSegment(seg, opts.upTo, opts.redact, { quality: SEAL_QUALITY, lgwin: SEAL_LGWIN });
    if (!rewritten) continue;
    const tmp = `${seg.file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    await writeDurably(tmp, rewritten.segment);
    // Segments are immutable copies of the stream, read whole: the rename is atomic for any reader.
    await opts.lock.withLock(() => {
      if (fs.existsSync(seg.file)) fs.renameSync(tmp, seg.file);
      else fs.rmSync(tmp, { force: true });
    });
    syncFolder(opts.sealedDir);
    result.segmentsRewritten++;
    result.segmentLines += rewritten.lines;
  }
  return result;
}

/** Under the lock, so nothing is appended while the file is copied. */
function purgeLive(opts: PurgeOptions, result: PurgeResult): void {
  const fd = fs.openSync(opts.journalPath, 'r');
  let data: Buffer;
  let head: ReturnType<typeof readHead>;
  try {
    head = readHead(fd, opts.journalPath);
    data = fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const out = Buffer.from(data);
  let changed = 0;
  for (let lineStart = head.headerLen; lineStart < data.length; ) {
    const nl = data.indexOf(0x0a, lineStart);
    if (nl === -1) break; // a torn last line is no operation
    const offset = head.base + lineStart - head.headerLen;
    if (offset >= opts.upTo) break;
    if (!mayMention(data.subarray(lineStart, nl), opts.redact)) {
      lineStart = nl + 1;
      continue;
    }
    const op = parseOperation(data.toString('utf8', lineStart, nl));
    const verdict = typeof op === 'string' ? undefined : opts.redact.apply(op);
    if (typeof op !== 'string' && verdict) {
      const replacement = fitted(op, verdict, nl - lineStart);
      if (replacement) {
        replacement.copy(out, lineStart);
        changed++;
      } else {
        result.unpurged.push(`the journal line at offset ${offset} (${op.op}) could not be rewritten in its ${nl - lineStart} bytes`);
      }
    }
    lineStart = nl + 1;
  }
  if (!changed) return;
  const tmp = `${opts.journalPath}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const w = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(w, out);
    fs.fsyncSync(w);
  } finally {
    fs.closeSync(w);
  }
  fs.renameSync(tmp, opts.journalPath);
  syncFolder(path.dirname(opts.journalPath));
  result.liveLines += changed;
}

/**
 * The replacement line in exactly `length` bytes (spaces after the JSON pad it), or undefined
 * when it does not fit: a redaction only removes, so its JSON fits the line it was cut from.
 */
function fitted(op: Operation, verdict: Operation | 'drop', length: number): Buffer | undefined {
  const bytes = Buffer.from(redactedJson(op, verdict), 'utf8');
  return bytes.length <= length ? Buffer.concat([bytes, Buffer.alloc(length - bytes.length, 0x20)]) : undefined;
}

async function writeDurably(file: string, data: Buffer): Promise<void> {
  const handle = await fs.promises.open(file, 'w', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
