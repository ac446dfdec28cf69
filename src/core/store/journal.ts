import * as fs from 'node:fs';
import { brotliCompressSync, brotliDecompressSync, constants as zlibConstants, inflateRawSync } from 'node:zlib';

/**
 * One logical write. Ids and times are chosen by the writer and recorded, so replay is
 * deterministic. Plain JSON data only (no undefined-vs-null, NaN or Date distinctions): the
 * writing process applies the object itself, every other process the line parsed back.
 */
export interface Operation {
  op: string;
  at: number;
  [field: string]: unknown;
}

export interface JournalProblem {
  offset: number;
  reason: string;
}

const READ_CHUNK = 8 * 1024 * 1024;
const NEWLINE = 0x0a;
/**
 * An operation whose JSON is at least this long is written compressed (see `encodeLine`). Most
 * memory writes (a fact, a statement of a few sentences) stay plain: compressing them saves
 * little, and a person reading the journal can still read them. Code that reads journal lines
 * itself must use `parseOperation`, which handles every form.
 */
export const DEFLATE_MIN_CHARS = 2048;
/** The field that held a deflated operation in lines of earlier builds; still read. */
const DEFLATED = 'deflated';
/** The field that holds a brotli-compressed operation; `op` and `at` stay readable beside it. */
const BROTLI = 'brotli';
/**
 * Brotli quality for large lines, chosen for the import rate: lines are compressed on the
 * importing thread. On the 100 MB bench's 3,325 large lines (39.7 MB of JSON), before base64:
 * deflate level 1 (earlier builds) 11.26 MB at ~80 MB/s, q3 10.32 MB at ~50 MB/s, q4 10.01 MB
 * at ~30 MB/s, q5 9.38 MB at ~19 MB/s. In the import bench q5 cut the journal 14.9 → 12.5 MB but
 * added ~0.8 s (~9% of the import); q3 gives 13.7 MB for about the time deflate took.
 */
const LINE_BROTLI_QUALITY = 3;

/**
 * The append-only journal: one JSON line per operation. Every process appends with a single
 * O_APPEND write followed by fdatasync before it acknowledges, so a write survives kill -9
 * and concurrent appenders never interleave bytes.
 */
export class Journal {
  private readonly appendFd: number;
  private readonly readFd: number;
  /** The background fdatasync running now, and the one queued to start when it ends (see sync). */
  private syncRunning: Promise<void> | undefined;
  private syncQueued: Promise<void> | undefined;
  private closed = false;

  constructor(readonly path: string) {
    this.appendFd = fs.openSync(path, 'a');
    this.readFd = fs.openSync(path, 'r');
  }

  size(): number {
    return fs.fstatSync(this.readFd).size;
  }

  /**
   * Appends and syncs. A line torn by a crash (no trailing newline) is first closed off so the
   * new line does not glue onto it; the fragment then reads as one unparseable line.
   */
  append(op: Operation, options: { sync: boolean } = { sync: true }): number {
    const size = this.size();
    const prefix = size > 0 && this.lastByte(size) !== NEWLINE ? '\n' : '';
    const line = Buffer.from(prefix + encodeLine(op) + '\n', 'utf8');
    fs.writeSync(this.appendFd, line);
    if (options.sync) fs.fdatasyncSync(this.appendFd);
    return line.length;
  }

  /**
   * Flushes every line written so far (by any process: fdatasync covers the whole file) on the
   * thread pool, so the caller's thread can go on working meanwhile. Calls made while one runs
   * share a single next fdatasync, started when it ends: it covers every line written before
   * any of them asked. One fdatasync per call instead queued up behind each other on a busy disk
   * (about 25 ms each in the bench, against 1–5 ms alone).
   */
  sync(): Promise<void> {
    if (this.syncQueued) return this.syncQueued;
    if (!this.syncRunning) return this.startSync();
    const done = () => undefined;
    this.syncQueued = this.syncRunning.then(done, done).then(() => {
      this.syncQueued = undefined;
      return this.startSync();
    });
    return this.syncQueued;
  }

  private startSync(): Promise<void> {
    // close() synced everything before closing the descriptor.
    if (this.closed) return Promise.resolve();
    const p = new Promise<void>((resolve, reject) => fs.fdatasync(this.appendFd, (err) => (err ? reject(err) : resolve())));
    this.syncRunning = p;
    const clear = () => {
      if (this.syncRunning === p) this.syncRunning = undefined;
    };
    p.then(clear, clear);
    return p;
  }

  /**
   * Reads complete lines from `offset` to the end. Returns the operations and the offset just
   * past the last complete line; a partial last line is left for the next read.
   */
  readFrom(offset: number, onOp: (op: Operation, endOffset: number) => void, onProblem: (p: JournalProblem) => void): number {
    const end = this.size();
    let pos = offset;
    let carry: Buffer = Buffer.alloc(0);
    let carryStart = offset;
    while (pos < end) {
      const want = Math.min(READ_CHUNK, end - pos);
      const chunk = Buffer.allocUnsafe(want);
      const got = fs.readSync(this.readFd, chunk, 0, want, pos);
      if (got <= 0) break;
      pos += got;
      const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, got)]) : chunk.subarray(0, got);
      let lineStart = 0;
      for (let i = buf.indexOf(NEWLINE); i !== -1; i = buf.indexOf(NEWLINE, lineStart)) {
        const lineOffset = carryStart + lineStart;
        if (i > lineStart) {
          const text = buf.toString('utf8', lineStart, i);
          const op = parseOperation(text);
          if (typeof op === 'string') onProblem({ offset: lineOffset, reason: op });
          else onOp(op, carryStart + i + 1);
        }
        lineStart = i + 1;
      }
      carry = Buffer.from(buf.subarray(lineStart));
      carryStart += lineStart;
    }
    return carryStart;
  }

  close(): void {
    if (this.syncRunning || this.syncQueued) fs.fdatasyncSync(this.appendFd);
    this.closed = true;
    fs.closeSync(this.appendFd);
    fs.closeSync(this.readFd);
  }

  private lastByte(size: number): number {
    const b = Buffer.alloc(1);
    fs.readSync(this.readFd, b, 0, 1, size - 1);
    return b[0] ?? NEWLINE;
  }
}

/**
 * One operation as one JSON line. A large one (an imported transcript file) is compressed into a
 * base64 field (brotli; earlier builds deflated it into `deflated`). It is still one
 * self-contained line, so appends, tailing by byte offset and torn-line handling are unchanged;
 * lines written before this (plain JSON or deflated) read as they always did.
 */
export function encodeLine(op: Operation): string {
  const json = JSON.stringify(op);
  if (json.length < DEFLATE_MIN_CHARS) return json;
  const bytes = Buffer.from(json, 'utf8');
  const packed = brotliCompressSync(bytes, {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: LINE_BROTLI_QUALITY,
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  }).toString('base64');
  return JSON.stringify({ op: op.op, at: op.at, [BROTLI]: packed });
}

export function parseOperation(text: string): Operation | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `unparseable line (${text.length} chars)`;
  }
  if (!isOperation(value)) return 'line is JSON but not an operation';
  const brotli = value[BROTLI];
  const deflated = value[DEFLATED];
  // A line carries at most one packed form; both at once is not a line this code wrote.
  if (typeof brotli === 'string' && typeof deflated === 'string') return `operation "${value.op}" holds both a brotli and a deflated form`;
  const packed = typeof brotli === 'string' ? { form: 'brotli', text: brotli, decode: brotliDecompressSync } : typeof deflated === 'string' ? { form: 'deflated', text: deflated, decode: inflateRawSync } : undefined;
  if (!packed) return value;
  let inner: unknown;
  try {
    inner = JSON.parse(packed.decode(Buffer.from(packed.text, 'base64')).toString('utf8'));
  } catch (err) {
    return `${packed.form} operation "${value.op}" cannot be read (${(err as Error).message})`;
  }
  if (!isOperation(inner) || inner.op !== value.op || inner.at !== value.at) return `${packed.form} operation "${value.op}" does not match its line`;
  return inner;
}

function isOperation(value: unknown): value is Operation {
  return !!value && typeof value === 'object' && typeof (value as Operation).op === 'string' && typeof (value as Operation).at === 'number';
}
