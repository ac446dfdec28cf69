import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_REQUEST_BYTES, requestTooLarge } from '../core/tools/requestLimit';
import { BoundedLines, oversizedAnswer, type OversizedLine } from './boundedLines';

/**
 * MCP over stdio, one JSON-RPC message per line, with a bound on one line. The SDK's own stdio
 * transport closes the whole connection when its read buffer passes 10 MiB, without a word to
 * the client; here a line over the bound is skipped to its end (never held) and answered with
 * a JSON-RPC error that gives its size and the bound, and the connection goes on.
 */

export { requestId } from './boundedLines';

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly lines: BoundedLines;

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    readonly maxLineBytes = MAX_REQUEST_BYTES,
  ) {
    this.lines = new BoundedLines(maxLineBytes, (line) => this.onLine(line), (over) => this.refuse(over));
  }

  private readonly ondata = (chunk: Buffer) => this.lines.push(chunk);

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
    this.lines.clear();
    this.onclose?.();
    return Promise.resolve();
  }

  private onLine(line: string): void {
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
  private refuse(over: OversizedLine): void {
    const reason = requestTooLarge(over.bytes, this.maxLineBytes);
    const answer = oversizedAnswer(over, this.maxLineBytes, reason);
    if (!answer) {
      this.onerror?.(new Error(`${reason} (no request id was found, so no answer was sent)`));
      return;
    }
    void this.send(answer);
  }
}
