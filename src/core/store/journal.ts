import * as fs from 'node:fs';

/** One logical write. Ids and times are chosen by the writer and recorded, so replay is deterministic. */
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
 * The append-only journal: one JSON line per operation. Every process appends with a single
 * O_APPEND write followed by fdatasync before it acknowledges, so a write survives kill -9
 * and concurrent appenders never interleave bytes.
 */
export class Journal {
  private readonly appendFd: number;
  private readonly readFd: number;

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
  append(op: Operation): number {
    const size = this.size();
    const prefix = size > 0 && this.lastByte(size) !== NEWLINE ? '\n' : '';
    const line = Buffer.from(prefix + JSON.stringify(op) + '\n', 'utf8');
    fs.writeSync(this.appendFd, line);
    fs.fdatasyncSync(this.appendFd);
    return line.length;
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
    fs.closeSync(this.appendFd);
    fs.closeSync(this.readFd);
  }

  private lastByte(size: number): number {
    const b = Buffer.alloc(1);
    fs.readSync(this.readFd, b, 0, 1, size - 1);
    return b[0] ?? NEWLINE;
  }
}

function parseOperation(text: string): Operation | string {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && typeof (value as Operation).op === 'string' && typeof (value as Operation).at === 'number') {
      return value as Operation;
    }
    return 'line is JSON but not an operation';
  } catch {
    return `unparseable line (${text.length} chars)`;
  }
}
