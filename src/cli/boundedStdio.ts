import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_REQUEST_BYTES, requestTooLarge } from '../core/tools/requestLimit';

/**
 * MCP over stdio, one JSON-RPC message per line, with a bound on one line. The SDK's own stdio
 * transport closes the whole connection when its read buffer passes 10 MiB, without a word to
 * the client; here a line over the bound is skipped to its end (never held) and answered with
 * a JSON-RPC error that gives its size and the bound, and the connection goes on.
 */

/** How much of an oversized line's start and end is kept, to find the request's id in. */
const EDGE_BYTES = 1024;

interface Oversized {
  bytes: number;
  head: Buffer;
  tail: Buffer;
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private oversized: Oversized | undefined;

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    readonly maxLineBytes = MAX_REQUEST_BYTES,
  ) {}

  private readonly ondata = (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(0x0a, at);
      const piece = chunk.subarray(at, nl < 0 ? chunk.length : nl);
      this.take(piece);
      if (nl < 0) break;
      this.endLine();
      at = nl + 1;
    }
  };

  private readonly onStdinError = (error: Error) => this.onerror?.(error);

  start(): Promise<void> {
    this.stdin.on('data', this.ondata);
    this.stdin.on('error', this.onStdinError);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  close(): Promise<void> {
    this.stdin.off('data', this.ondata);
    this.stdin.off('error', this.onStdinError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.pending = [];
    this.pendingBytes = 0;
    this.oversized = undefined;
    this.onclose?.();
    return Promise.resolve();
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
      this.refuse(over);
      return;
    }
    const line = Buffer.concat(this.pending).toString('utf8').replace(/\r$/, '');
    this.pending = [];
    this.pendingBytes = 0;
    if (!line.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.onmessage?.(message);
  }

  /** Answers the oversized request by its id (found at either end of the line); a notification has none and is only reported. */
  private refuse(over: Oversized): void {
    const reason = requestTooLarge(over.bytes, this.maxLineBytes);
    const id = requestId(over.head.toString('utf8'), over.tail.toString('utf8'));
    if (id === undefined) {
      this.onerror?.(new Error(`${reason} (no request id was found, so no answer was sent)`));
      return;
    }
    void this.send({ jsonrpc: '2.0', id, error: { code: -32600, message: reason, data: { bytes: over.bytes, limit: this.maxLineBytes } } });
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
