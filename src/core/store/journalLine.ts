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
 * One operation as one JSON line. With `pack`, a large one (an imported transcript file) is
 * compressed into a base64 field (brotli; earlier builds deflated it into `deflated`). It is
 * still one self-contained line, so appends, tailing by byte offset and torn-line handling are
 * unchanged; every form reads back the same. Where the journal is sealed (journalSeal.ts), lines
 * are written plain: the seal compresses the whole prefix far better than line by line (13.7 MB
 * of packed lines or 38 MB of plain ones both became a 4.5 MB segment in the import bench), and
 * the import skips a brotli pass over every file it records.
 */
export function encodeLine(op: Operation, pack = true): string {
  const json = JSON.stringify(op);
  if (!pack || json.length < DEFLATE_MIN_CHARS) return json;
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
  const line = readLine(text);
  return typeof line === 'string' ? line : line.op;
}

/**
 * A line's operation and, for a packed line, the JSON bytes it unpacked to (a sealed segment
 * stores those instead of the base64, so its compressor sees text); or why the line is skipped.
 */
export function readLine(text: string): { op: Operation; unpacked?: Buffer } | string {
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
  if (!packed) return { op: value };
  let inner: unknown;
  let unpacked: Buffer;
  try {
    unpacked = packed.decode(Buffer.from(packed.text, 'base64'));
    inner = JSON.parse(unpacked.toString('utf8'));
  } catch (err) {
    return `${packed.form} operation "${value.op}" cannot be read (${(err as Error).message})`;
  }
  if (!isOperation(inner) || inner.op !== value.op || inner.at !== value.at) return `${packed.form} operation "${value.op}" does not match its line`;
  return { op: inner, unpacked };
}

/** An unpacked line as a sealed segment stores it, read exactly as `readLine` read the packed one. */
export function parseUnpacked(bytes: Buffer): Operation | undefined {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return isOperation(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isOperation(value: unknown): value is Operation {
  return !!value && typeof value === 'object' && typeof (value as Operation).op === 'string' && typeof (value as Operation).at === 'number';
}
