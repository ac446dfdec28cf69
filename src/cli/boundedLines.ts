/**
 * Newline-delimited input with a bound on one line, shared by the MCP server's stdio transport
 * and the thin relay (mcpRelay.ts), which must not load the MCP SDK. A line within the bound is
 * handed on whole; one over it is never held: only its first and last bytes are kept (to find a
 * request's id in) while the rest is skipped to its end.
 */

/** How much of an oversized line's start and end is kept, to find the request's id in. */
const EDGE_BYTES = 1024;

export interface OversizedLine {
  bytes: number;
  head: Buffer;
  tail: Buffer;
}

export class BoundedLines {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private oversized: OversizedLine | undefined;

  constructor(
    readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversized: (line: OversizedLine) => void,
  ) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(0x0a, at);
      this.take(chunk.subarray(at, nl < 0 ? chunk.length : nl));
      if (nl < 0) break;
      this.endLine();
      at = nl + 1;
    }
  }

  clear(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.oversized = undefined;
  }

  /** Part of the current line: held while the line is within the bound, else only its edges are kept. */
  private take(piece: Buffer): void {
    if (!piece.length) return;
    const over = this.oversized;
    if (over) {
      over.bytes += piece.length;
      over.tail = Buffer.concat([over.tail, piece]).subarray(-EDGE_BYTES);
      return;
    }
    if (this.pendingBytes + piece.length <= this.maxLineBytes) {
      // A copy: the chunk's memory is not kept alive by a slice of it.
      this.pending.push(Buffer.from(piece));
      this.pendingBytes += piece.length;
      return;
    }
    const held = Buffer.concat([...this.pending, piece]);
    this.oversized = { bytes: held.length, head: Buffer.from(held.subarray(0, EDGE_BYTES)), tail: Buffer.from(held.subarray(-EDGE_BYTES)) };
    this.pending = [];
    this.pendingBytes = 0;
  }

  private endLine(): void {
    const over = this.oversized;
    if (over) {
      this.oversized = undefined;
      this.onOversized(over);
      return;
    }
    const line = Buffer.concat(this.pending).toString('utf8').replace(/\r$/, '');
    this.pending = [];
    this.pendingBytes = 0;
    if (line.trim()) this.onLine(line);
  }
}

/**
 * The top-level "id" of a JSON-RPC request seen only by its edges: the SDK's client writes it
 * last (…,"jsonrpc":"2.0","id":7}), others first ({"jsonrpc":"2.0","id":7,…}).
 */
export function requestId(head: string, tail: string): string | number | undefined {
  const value = '(-?\\d+|"(?:[^"\\\\]|\\\\.)*")';
  const last = new RegExp(`"id"\\s*:\\s*${value}\\s*\\}\\s*$`).exec(tail.replace(/\r$/, ''));
  const first = new RegExp(`^\\s*\\{(?:\\s*"(?:jsonrpc|method)"\\s*:\\s*"[^"\\\\]*"\\s*,)*\\s*"id"\\s*:\\s*${value}`).exec(head);
  const raw = last?.[1] ?? first?.[1];
  if (raw === undefined) return undefined;
  return JSON.parse(raw) as string | number;
}

/** The JSON-RPC answer to an oversized request (by its id), or undefined for a line with no id (nothing can be answered). */
export function oversizedAnswer(over: OversizedLine, limit: number, reason: string): { jsonrpc: '2.0'; id: string | number; error: { code: number; message: string; data: { bytes: number; limit: number } } } | undefined {
  const id = requestId(over.head.toString('utf8'), over.tail.toString('utf8'));
  if (id === undefined) return undefined;
  return { jsonrpc: '2.0', id, error: { code: -32600, message: reason, data: { bytes: over.bytes, limit } } };
}
