import * as fs from 'node:fs';
import * as path from 'node:path';
import { syncFolder, tempBeside } from './durableFile';
import { FILE_MODE, FOLDER_MODE, removeQuietly, writeFully } from './fileWrites';
import type { FileLock } from './fileLock';
import { removeDeadTemps } from './strayTemps';
import { headerLine, readHead, type LiveHead } from './journalLive';
import { buildSegment, listSegments, segmentName } from './journalSegments';

/**
 * Segment compression, measured on the 100 MB import bench's journal (40.2 MB of plain lines;
 * thread-pool time on a shared 2-core machine): quality 4 →
 * 5.12 MB in 0.7 s, 5 → 4.71 MB in 1.0–1.2 s, 6 → 4.53 MB in 1.1–2.2 s, 7 → 4.42 MB in 3.1 s,
 * 9 → 4.26 MB in 10 s. A 16 MB window gave the same size as 4 MB at quality 5–6 and needs
 * four times the decoder memory, so 6 with a 4 MB window.
 */
export const SEAL_QUALITY = 6;
export const SEAL_LGWIN = 22;
/**
 * Journal bytes per segment at most: building one holds the raw bytes, a copy behind the
 * segment's header and the output in memory, and a replay decodes a whole segment at once.
 */
export const MAX_SEGMENT_BYTES = 32 * 1024 * 1024;
const NEWLINE = 0x0a;

/** Steps a test can stop the process at (kill -9) to check that every crash point is safe. */
export type SealStep = 'segment-written' | 'segment-placed' | 'live-written' | 'live-swapped';

export interface SealOptions {
  journalPath: string;
  sealedDir: string;
  lock: FileLock;
  /** Seal up to this logical offset: a line end that the snapshot on disk already covers. */
  upTo: number;
  /** Do nothing unless at least this many bytes would be sealed. */
  minBytes: number;
  /** Checked before the swap: a store closed meanwhile leaves its journal alone. */
  cancelled?: () => boolean;
  onStep?: (step: SealStep) => void;
  quality?: number;
  lgwin?: number;
  maxSegmentBytes?: number;
}

export interface SealResult {
  start: number;
  end: number;
  /** Segment bytes on disk. */
  segmentBytes: number;
  /** Bytes of the live journal that moved into the segment. */
  sealedBytes: number;
  /** Time spent building and compressing (outside the lock) and swapping (under it). */
  buildMs: number;
  swapMs: number;
}

/**
 * Moves the journal's prefix [base, upTo) — at most `maxSegmentBytes` of it, cut at a line end —
 * into a sealed segment. The prefix never changes (the
 * journal is append-only), so it is read and compressed without the lock, on the thread pool;
 * the lock is taken only to re-check and swap. Crash safety comes from the order: the segment
 * is durable under its final name before the new live file (its header = the segment's end, then
 * the bytes past it) is renamed over journal.jsonl, and it is the live file's header that says what is live.
 * A crash before that rename leaves the old live file, which still holds everything; the stray
 * segment starts at or after the live base and is removed by the next seal.
 */
export async function sealJournal(opts: SealOptions): Promise<SealResult | undefined> {
  const t0 = performance.now();
  const head = readHeadOf(opts.journalPath);
  const start = head.base;
  if (opts.upTo - start < opts.minBytes || opts.upTo <= start) return undefined;
  const want = Math.min(opts.upTo - start, opts.maxSegmentBytes ?? MAX_SEGMENT_BYTES);
  let raw = await readRange(opts.journalPath, head, want);
  if (raw && want < opts.upTo - start) {
    // Cut at the last line end; a single line longer than the cap goes whole.
    const cut = raw.lastIndexOf(NEWLINE) + 1;
    raw = cut > 0 ? raw.subarray(0, cut) : await readRange(opts.journalPath, head, opts.upTo - start);
  }
  if (!raw) return undefined; // the file changed under us (sealed by another process): nothing to do now
  const end = start + raw.length;
  const segment = await buildSegment(raw, start, { quality: opts.quality ?? SEAL_QUALITY, lgwin: opts.lgwin ?? SEAL_LGWIN });
  fs.mkdirSync(opts.sealedDir, { recursive: true, mode: FOLDER_MODE });
  const finalPath = path.join(opts.sealedDir, segmentName(start, end));
  const tmp = tempBeside(finalPath);
  await writeDurably(tmp, segment);
  opts.onStep?.('segment-written');
  const buildMs = performance.now() - t0;
  if (opts.cancelled?.()) {
    fs.rmSync(tmp, { force: true });
    return undefined;
  }
  const t1 = performance.now();
  const swapped = await opts.lock.withLock(() => swap(opts, head, end, tmp, finalPath));
  if (!swapped) return undefined;
  removeDeadTemps(opts.sealedDir);
  removeDeadTemps(path.dirname(opts.journalPath));
  return { start, end, segmentBytes: segment.length, sealedBytes: end - start, buildMs, swapMs: performance.now() - t1 };
}

/** Seals segment after segment until less than `minBytes` of the covered prefix is left live. */
export async function sealCovered(opts: SealOptions): Promise<SealResult | undefined> {
  let total: SealResult | undefined;
  for (;;) {
    const one = await sealJournal(opts);
    if (!one) return total;
    total = total
      ? { ...total, end: one.end, segmentBytes: total.segmentBytes + one.segmentBytes, sealedBytes: total.sealedBytes + one.sealedBytes, buildMs: total.buildMs + one.buildMs, swapMs: total.swapMs + one.swapMs }
      : one;
  }
}

/** Under the lock: nothing can be appended meanwhile, so the copied tail is the whole tail. */
function swap(opts: SealOptions, read: LiveHead & { ino: number }, end: number, tmp: string, finalPath: string): boolean {
  const start = read.base;
  const fd = fs.openSync(opts.journalPath, 'r');
  try {
    const now = readHead(fd, opts.journalPath);
    // Another file at the path (a purge rewrote it: journalPurge.ts) may differ from the bytes the segment was built from.
    if (now.base !== start || fs.fstatSync(fd).ino !== read.ino || opts.cancelled?.()) {
      fs.rmSync(tmp, { force: true });
      return false;
    }
    // Segments at or past the live base were left by a seal that crashed before its swap.
    for (const stray of listSegments(opts.sealedDir)) if (stray.start >= start && stray.file !== finalPath) fs.rmSync(stray.file, { force: true });
    fs.renameSync(tmp, finalPath);
    syncFolder(opts.sealedDir);
    opts.onStep?.('segment-placed');

    const from = now.headerLen + (end - start);
    const size = fs.fstatSync(fd).size;
    const liveTmp = tempBeside(opts.journalPath);
    // Only a whole, synced copy may replace the live file; a short write (full disk) leaves the
    // old file in place, which still holds everything (the segment placed above is then a stray
    // the next seal removes).
    try {
      const out = fs.openSync(liveTmp, 'w', FILE_MODE);
      try {
        writeFully(out, headerLine(end));
        copyTail(fd, from, size, out, opts.journalPath);
        fs.fsyncSync(out);
      } finally {
        fs.closeSync(out);
      }
    } catch (err) {
      removeQuietly(liveTmp);
      throw err;
    }
    opts.onStep?.('live-written');
    fs.renameSync(liveTmp, opts.journalPath);
    syncFolder(path.dirname(opts.journalPath));
    opts.onStep?.('live-swapped');
    return true;
  } finally {
    fs.closeSync(fd);
  }
}

/** The tail is copied a piece at a time: after a large import it is most of the journal, and whole it would be held in memory. */
const COPY_PIECE = 1024 * 1024;

function copyTail(fd: number, from: number, size: number, out: number, file: string): void {
  const piece = Buffer.allocUnsafe(Math.min(COPY_PIECE, Math.max(0, size - from)));
  for (let at = from; at < size; ) {
    const n = fs.readSync(fd, piece, 0, Math.min(piece.length, size - at), at);
    if (n <= 0) throw new Error(`journal ${file} shrank while sealing`);
    writeFully(out, piece.subarray(0, n));
    at += n;
  }
}

function readHeadOf(file: string): LiveHead & { ino: number } {
  const fd = fs.openSync(file, 'r');
  try {
    return { ...readHead(fd, file), ino: fs.fstatSync(fd).ino };
  } finally {
    fs.closeSync(fd);
  }
}

/** The live file's bytes from just past its header; undefined if it was replaced or is too short. */
async function readRange(file: string, expected: LiveHead & { ino: number }, length: number): Promise<Buffer | undefined> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const head = readHead(handle.fd, file);
    if (head.base !== expected.base || head.headerLen !== expected.headerLen || fs.fstatSync(handle.fd).ino !== expected.ino) return undefined;
    const buf = Buffer.allocUnsafe(length);
    const { bytesRead } = await handle.read(buf, 0, length, head.headerLen);
    return bytesRead === length ? buf : undefined;
  } finally {
    await handle.close();
  }
}

/** writeFile loops until every byte is written; on any failure the temp file goes. */
async function writeDurably(file: string, data: Buffer): Promise<void> {
  try {
    const handle = await fs.promises.open(file, 'w', FILE_MODE);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    removeQuietly(file);
    throw err;
  }
}
