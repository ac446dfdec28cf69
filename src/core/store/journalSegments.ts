import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompressSync, constants as zlibConstants, createBrotliCompress } from 'node:zlib';
import { StoreCorruptError } from './errors';
import { FILE_MODE } from './fileWrites';
import { parseOperation, type JournalProblem, type Operation } from './journalLine';

/**
 * A sealed segment holds the journal's logical bytes [start, end) as one brotli stream of
 *   {"recollect_segment":1,"start":S,"end":E,"lens":[...],"sha256":"..."}\n
 *   <one stored line>\n<one stored line>\n...
 * where `lens` gives each line's byte length (its newline included) and sha256 covers the stored
 * lines. Every line therefore keeps its logical offsets, and replay yields the operations and
 * problems the original bytes gave. `recollect_segment` is the segment format's version; a
 * negative length (a line an earlier build had packed, stored unpacked) is refused as a problem.
 */
const SEGMENT_VERSION = 1;
const SEGMENT_KEY = 'recollect_segment';
const NEWLINE = 0x0a;
const NAME = /^(\d+)-(\d+)\.br$/;

export interface SegmentFile {
  start: number;
  end: number;
  file: string;
}

export function segmentName(start: number, end: number): string {
  return `${start}-${end}.br`;
}

/** The segments in `dir`, in start order; files of any other name (temp files) are ignored. */
export function listSegments(dir: string): SegmentFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: SegmentFile[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m) continue;
    const start = Number(m[1]);
    const end = Number(m[2]);
    if (end > start) out.push({ start, end, file: path.join(dir, name) });
  }
  return out.sort((a, b) => a.start - b.start || b.end - a.end);
}

/** The index a segment's header holds: each line's byte length (newline included) and the sha256 of them all. */
export interface SegmentIndex {
  lens: number[];
  sha256: string;
}

/** Indexes lines fed a piece at a time: a line may span pieces. */
export class SegmentIndexer {
  private readonly lens: number[] = [];
  private readonly hash = createHash('sha256');
  private open = 0;

  add(piece: Buffer): void {
    this.hash.update(piece);
    for (let from = 0; ; ) {
      const nl = piece.indexOf(NEWLINE, from);
      if (nl === -1) {
        this.open += piece.length - from;
        return;
      }
      this.lens.push(this.open + nl + 1 - from);
      this.open = 0;
      from = nl + 1;
    }
  }

  finish(): SegmentIndex {
    if (this.open !== 0 || this.lens.length === 0) throw new Error('a sealed prefix must end at a line end');
    return { lens: this.lens, sha256: this.hash.digest('hex') };
  }
}

/**
 * Writes a segment of the journal's bytes [start, end) to `file` and syncs it: the header, then
 * `pieces` (those same bytes, read again in order), through one brotli stream on the thread pool.
 * Neither the bytes nor the output are ever held whole (an import's seal runs while the
 * database is at its largest): each piece is compressed and its output written before the next
 * is asked for, so `pieces` may hand out the same buffer every time.
 */
export async function writeSegment(
  file: string,
  start: number,
  end: number,
  index: SegmentIndex,
  pieces: AsyncIterable<Buffer>,
  params: { quality: number; lgwin: number },
): Promise<number> {
  const header = Buffer.from(`${JSON.stringify({ [SEGMENT_KEY]: SEGMENT_VERSION, start, end, lens: index.lens, sha256: index.sha256 })}\n`, 'utf8');
  const brotli = createBrotliCompress({
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: params.quality,
      [zlibConstants.BROTLI_PARAM_LGWIN]: params.lgwin,
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: header.length + (end - start),
    },
  });
  let output: Buffer[] = [];
  let failure: Error | undefined;
  brotli.on('data', (chunk: Buffer) => output.push(chunk));
  brotli.on('error', (err: Error) => (failure = err));
  const ended = new Promise<void>((resolve) => brotli.once('end', resolve));
  const handle = await fs.promises.open(file, 'w', FILE_MODE);
  let written = 0;
  const flush = async () => {
    const ready = output;
    output = [];
    for (const chunk of ready) {
      for (let at = 0; at < chunk.length; ) at += (await handle.write(chunk, at, chunk.length - at)).bytesWritten;
      written += chunk.length;
    }
  };
  // The write callback runs once the stream has consumed the piece, so its buffer is free again.
  const feed = (piece: Buffer) => new Promise<void>((resolve, reject) => brotli.write(piece, (err) => (err ? reject(err) : resolve())));
  try {
    await feed(header);
    for await (const piece of pieces) {
      await feed(piece);
      await flush();
    }
    brotli.end();
    await Promise.race([ended, new Promise<void>((_, reject) => brotli.once('error', reject))]);
    if (failure) throw failure;
    await flush();
    await handle.sync();
  } finally {
    brotli.destroy();
    await handle.close();
  }
  return written;
}

const NL = Buffer.from([NEWLINE]);

/**
 * Replays the lines of one segment that start in [from, until): `from` must be a line start.
 * Returns the offset after the last line replayed. Any damage is a StoreCorruptError naming
 * the file, which is left where it is for a person to inspect or restore.
 */
export function replaySegment(
  seg: SegmentFile,
  from: number,
  until: number,
  onOp: (op: Operation, endOffset: number) => void,
  onProblem: (p: JournalProblem) => void,
): number {
  const damaged = (why: string) =>
    new StoreCorruptError(`sealed journal segment ${seg.file} is damaged (${why}); the journal before byte ${seg.end} cannot be replayed without it. It was left in place: restore it from a backup.`, seg.file);
  let body: Buffer;
  try {
    body = brotliDecompressSync(fs.readFileSync(seg.file));
  } catch (err) {
    throw damaged((err as Error).message);
  }
  const headerEnd = body.indexOf(NEWLINE);
  let header: { start?: unknown; end?: unknown; lens?: unknown; sha256?: unknown; [SEGMENT_KEY]?: unknown };
  try {
    header = JSON.parse(body.toString('utf8', 0, Math.max(0, headerEnd))) as typeof header;
  } catch {
    throw damaged('no readable header');
  }
  const lens = header.lens;
  if (header[SEGMENT_KEY] !== SEGMENT_VERSION) throw damaged(`it is in segment format version ${String(header[SEGMENT_KEY])}; this build reads version ${SEGMENT_VERSION} only`);
  if (header.start !== seg.start || header.end !== seg.end || !Array.isArray(lens)) throw damaged('its header does not match its name');
  const lines = body.subarray(headerEnd + 1);
  if (createHash('sha256').update(lines).digest('hex') !== header.sha256) throw damaged('checksum mismatch');
  let offset = seg.start;
  let pos = 0;
  for (const len of lens as unknown[]) {
    if (typeof len !== 'number' || !Number.isSafeInteger(len) || len === 0) throw damaged('bad line length');
    const nl = lines.indexOf(NEWLINE, pos);
    if (nl === -1) throw damaged('fewer lines than its index');
    const stored = lines.subarray(pos, nl);
    pos = nl + 1;
    const lineStart = offset;
    offset += Math.abs(len);
    if (offset <= from) continue;
    if (lineStart < from) throw new StoreCorruptError(`journal offset ${from} falls inside a line of sealed segment ${seg.file}`, seg.file);
    if (lineStart >= until) return lineStart;
    if (len < 0) {
      onProblem({ offset: lineStart, reason: 'a line an earlier build packed (stored unpacked in its sealed segment), a line encoding this build does not read' });
    } else if (stored.length > 0) {
      const op = parseOperation(stored.toString('utf8'));
      if (typeof op === 'string') onProblem({ offset: lineStart, reason: op });
      else onOp(op, offset);
    }
  }
  if (offset !== seg.end || pos !== lines.length) throw damaged('its lines do not add up to its range');
  return offset;
}

/**
 * What a purge makes of one operation: `apply` gives the operation to keep in its place, `'drop'`
 * to keep nothing of it (a `journal.purged` line stands in, so offsets and replay stay valid), or
 * undefined to leave the line exactly as it is. Only a line whose JSON holds one of `mentions` is
 * parsed and asked: parsing every line of a large journal is most of a purge's time otherwise.
 */
export interface Redact {
  mentions: readonly string[];
  apply(op: Operation): Operation | 'drop' | undefined;
}

/** Whether a stored or live line may hold something `redact` changes. */
export function mayMention(line: Buffer, redact: Redact): boolean {
  return redact.mentions.some((m) => line.includes(m));
}

/** The operation that stands in for a line a purge dropped: every build's store skips it without a warning. */
export const PURGED_OP = 'journal.purged';

export function redactedJson(op: Operation, verdict: Operation | 'drop'): string {
  return JSON.stringify(verdict === 'drop' ? { op: PURGED_OP, at: op.at } : verdict);
}

/**
 * The segment with `redact` applied to each operation line that starts before `upTo`, compressed
 * as a seal would; undefined when no line changed. Each line keeps its place in `lens` (a line's
 * stored form need not be as long as its original bytes), so offsets are the same as before.
 * A damaged segment is an error, as for replay: it is left alone for a person to restore.
 */
export async function redactSegment(seg: SegmentFile, upTo: number, redact: Redact, params: { quality: number; lgwin: number }): Promise<{ segment: Buffer; lines: number } | undefined> {
  const body = brotliDecompressSync(fs.readFileSync(seg.file));
  const headerEnd = body.indexOf(NEWLINE);
  const header = JSON.parse(body.toString('utf8', 0, headerEnd)) as { lens: number[]; sha256: string; [key: string]: unknown };
  const lines = body.subarray(headerEnd + 1);
  if (createHash('sha256').update(lines).digest('hex') !== header.sha256) throw new StoreCorruptError(`sealed journal segment ${seg.file} is damaged (checksum mismatch); it was not purged`, seg.file);
  const parts: Buffer[] = [];
  const hash = createHash('sha256');
  let changed = 0;
  let offset = seg.start;
  let pos = 0;
  for (const len of header.lens) {
    const nl = lines.indexOf(NEWLINE, pos);
    let stored = lines.subarray(pos, nl);
    pos = nl + 1;
    const lineStart = offset;
    offset += Math.abs(len);
    if (lineStart < upTo && len > 0 && stored.length > 0 && mayMention(stored, redact)) {
      const op = parseOperation(stored.toString('utf8'));
      const verdict = typeof op !== 'string' ? redact.apply(op) : undefined;
      if (typeof op !== 'string' && verdict) {
        stored = Buffer.from(redactedJson(op, verdict), 'utf8');
        changed++;
      }
    }
    parts.push(stored, NL);
    hash.update(stored).update(NL);
  }
  if (!changed) return undefined;
  const out = Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, sha256: hash.digest('hex') })}\n`, 'utf8'), ...parts]);
  const segment = await promisify(brotliCompress)(out, {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: params.quality,
      [zlibConstants.BROTLI_PARAM_LGWIN]: params.lgwin,
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: out.length,
    },
  });
  return { segment, lines: changed };
}
