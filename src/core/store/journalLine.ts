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
 * Fields that held a whole operation compressed (base64) in lines of earlier, unreleased builds:
 * deflate, then brotli where the journal was not sealed. Such a line is refused (see parseOperation).
 */
const PACKED_FIELDS = ['brotli', 'deflated'] as const;

/**
 * One operation as one line: its JSON, whatever its size. This is the journal's one line encoding
 * (journal format version 1, journalLive.ts). Large lines are not compressed one by one: every
 * platform seals the journal's old prefix into brotli segments (journalSeal.ts), which compress
 * the whole prefix better than line by line did (13.7 MB of packed lines or 38 MB of plain ones
 * both became a 4.5 MB segment in the import bench), an import skips a brotli pass over every
 * file it records, and a purge can see every line's text without unpacking it.
 */
export function encodeLine(op: Operation): string {
  return JSON.stringify(op);
}

/**
 * The line's operation, or why it is skipped: a torn or unparseable line, JSON that is no
 * operation, or an operation packed into a compressed field by an earlier build. Each is skipped
 * and counted (the store's journal_problems), never fatal. A packed line does not stop
 * checkpoints as an unknown operation does: only earlier builds wrote that encoding, and a newer
 * build that changes the encoding says so in the journal's header, which this build refuses.
 */
export function parseOperation(text: string): Operation | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `unparseable line (${text.length} chars)`;
  }
  if (!isOperation(value)) return 'line is JSON but not an operation';
  const packed = PACKED_FIELDS.find((f) => typeof value[f] === 'string');
  if (packed) return `operation "${value.op}" is packed (${packed}), a line encoding of earlier builds that this build does not read`;
  if (RETIRED_OPS.has(value.op)) return `operation "${value.op}" is one only earlier builds wrote, which this build does not read (importing the transcripts again brings their history back)`;
  return value;
}

/**
 * Operations only unreleased earlier builds wrote: one line per session plus one per file, which
 * `history.file.imported` replaced. Skipped like a packed line, so checkpoints go on (an unknown
 * operation stops them, since it means a newer build wrote the store).
 */
const RETIRED_OPS: ReadonlySet<string> = new Set(['history.session.imported', 'history.file.seen']);

function isOperation(value: unknown): value is Operation {
  return !!value && typeof value === 'object' && typeof (value as Operation).op === 'string' && typeof (value as Operation).at === 'number';
}
