import * as fs from 'node:fs';
import * as path from 'node:path';
import { syncFolder, tempBeside } from './durableFile';
import { FILE_MODE, FOLDER_MODE, removeQuietly, writeFully } from './fileWrites';
import type { FileLock } from './fileLock';
import { removeDeadTemps } from './strayTemps';
import { headerLine, readHead, type LiveHead } from './journalLive';
import { listSegments, SegmentIndexer, segmentName, writeSegment } from './journalSegments';

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
  // One descriptor for both passes: the prefix of the file it names never changes (a purge or
  // another seal puts a new file at the path), so both read the same bytes.
  const handle = await fs.promises.open(opts.journalPath, 'r');
  let segmentBytes: number;
  let end: number;
  let finalPath: string;
  let tmp: string;
  try {
    const now = readHead(handle.fd, opts.journalPath);
    if (now.base !== head.base || now.headerLen !== head.headerLen || fs.fstatSync(handle.fd).ino !== head.ino) return undefined; // sealed by another process meanwhile
    const length = await prefixLength(handle, now.headerLen, want, opts.upTo - start);
    if (length === undefined) return undefined;
    end = start + length;
    // Indexed in a first pass, since the header (lens, sha256) goes before the lines in the stream.
    const indexer = new SegmentIndexer();
    for await (const piece of pieces(handle, now.headerLen, length)) indexer.add(piece);
    const index = indexer.finish();
    fs.mkdirSync(opts.sealedDir, { recursive: true, mode: FOLDER_MODE });
    finalPath = path.join(opts.sealedDir, segmentName(start, end));
    tmp = tempBeside(finalPath);
    try {
      segmentBytes = await writeSegment(tmp, start, end, index, pieces(handle, now.headerLen, length), { quality: opts.quality ?? SEAL_QUALITY, lgwin: opts.lgwin ?? SEAL_LGWIN });
    } catch (err) {
      removeQuietly(tmp);
      throw err;
    }
  } finally {
    await handle.close();
  }
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
  return { start, end, segmentBytes, sealedBytes: end - start, buildMs, swapMs: performance.now() - t1 };
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

/**
 * How many bytes of the prefix (past the header) the segment takes: `want`, cut back to its last
 * line end; a single line longer than `want` goes whole. Undefined if the file is shorter than
 * the covered prefix (it cannot be: the snapshot covers it), so nothing is sealed.
 */
async function prefixLength(handle: fs.promises.FileHandle, headerLen: number, want: number, covered: number): Promise<number | undefined> {
  if (want >= covered) return (await fileLength(handle)) - headerLen >= covered ? covered : undefined;
  // The last line end at or before `want`, searched backwards a piece at a time.
  for (let to = want; to > 0; ) {
    const from = Math.max(0, to - READ_PIECE);
    const buf = Buffer.allocUnsafe(to - from);
    const { bytesRead } = await handle.read(buf, 0, buf.length, headerLen + from);
    if (bytesRead !== buf.length) return undefined;
    const nl = buf.lastIndexOf(NEWLINE);
    if (nl !== -1) return from + nl + 1;
    to = from;
  }
  // No line end before `want`: the first one after it.
  for (let from = want; from < covered; from += READ_PIECE) {
    const buf = Buffer.allocUnsafe(Math.min(READ_PIECE, covered - from));
    const { bytesRead } = await handle.read(buf, 0, buf.length, headerLen + from);
    if (bytesRead !== buf.length) return undefined;
    const nl = buf.indexOf(NEWLINE);
    if (nl !== -1) return from + nl + 1;
  }
  return undefined;
}

async function fileLength(handle: fs.promises.FileHandle): Promise<number> {
  return (await handle.stat()).size;
}

/**
 * Bytes [0, length) past the header, a piece at a time in one buffer that each piece reuses: its
 * consumers are done with a piece before they ask for the next, and a fresh buffer per piece
 * would leave the whole prefix in garbage the collector frees only in steps of tens of MB.
 */
async function* pieces(handle: fs.promises.FileHandle, headerLen: number, length: number): AsyncGenerator<Buffer> {
  const buf = Buffer.allocUnsafe(Math.min(READ_PIECE, length));
  for (let at = 0; at < length; ) {
    const n = Math.min(buf.length, length - at);
    const { bytesRead } = await handle.read(buf, 0, n, headerLen + at);
    if (bytesRead !== n) throw new Error('journal shrank while sealing');
    yield buf.subarray(0, n);
    at += n;
  }
}

const READ_PIECE = 1024 * 1024;
