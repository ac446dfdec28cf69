import * as net from 'node:net';
import { WriteRefusedError } from '../store/errors';
import { OWNER_PROTOCOL, readLines, send, type Call, type Peer, type Reply } from './protocol';

/** The owner went away (closed, killed) before it answered. */
export class OwnerGoneError extends Error {
  constructor() {
    super('the store owner went away before it answered');
    this.name = 'OwnerGoneError';
  }
}

/** The owner was handing the store over and did not run the call: safe to ask the next owner, write or not. */
export class NotRunError extends Error {}

/** A hello unanswered this long is an owner that does not serve (hung, or not Recollect). */
const HELLO_TIMEOUT_MS = 5_000;

export type Connected =
  | { kind: 'connected'; connection: OwnerConnection; owner: Peer; readOnlyTools: string[] }
  | { kind: 'refused'; owner: Peer; reason?: string }
  /** `noListener`: nothing listens at the address (no socket, or one nobody serves), unlike a listener that is slow to answer. */
  | { kind: 'unreachable'; problem: string; noListener?: boolean };

/** A client's one connection to its owner: requests numbered, answers matched, every pending one failed when it closes. */
export class OwnerConnection {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private closedHandlers: (() => void)[] = [];
  private closed = false;
  /** The owner said goodbye: nothing more is sent, and the connection ends once every call has its answer. */
  private leaving = false;

  private constructor(private readonly socket: net.Socket) {}

  /** Connects and says hello; the owner's welcome (or refusal) decides what comes back. */
  static open(socketPath: string, me: Peer): Promise<Connected> {
    return new Promise((resolve) => {
      let socket: net.Socket;
      try {
        socket = net.createConnection(socketPath);
      } catch (err) {
        // A sandbox that forbids sockets throws here instead of emitting 'error': no owner is reachable.
        resolve({ kind: 'unreachable', problem: err instanceof Error ? err.message : String(err) });
        return;
      }
      let settled = false;
      const settle = (c: Connected) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (c.kind !== 'connected') socket.destroy();
        resolve(c);
      };
      const timer = setTimeout(() => settle({ kind: 'unreachable', problem: `no answer to hello within ${HELLO_TIMEOUT_MS} ms` }), HELLO_TIMEOUT_MS);
      const connection = new OwnerConnection(socket);
      socket.on('error', (err) => {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        settle({ kind: 'unreachable', problem: err.message, noListener: code === 'ECONNREFUSED' || code === 'ENOENT' });
      });
      socket.on('close', () => {
        settle({ kind: 'unreachable', problem: 'closed before it answered the hello' });
        connection.fail();
      });
      socket.on('connect', () => send(socket, { hello: me }));
      let greeted = false;
      readLines(socket, (message) => {
        if (greeted) return connection.answer(message as Reply | { bye: true });
        greeted = true;
        const m = message as { welcome?: Peer; readOnlyTools?: string[]; refused?: { reason: string; owner: Peer } };
        if (m.refused) return settle({ kind: 'refused', owner: m.refused.owner, reason: m.refused.reason });
        if (!m.welcome) return settle({ kind: 'unreachable', problem: 'the peer did not answer the hello with a welcome' });
        // Never half-served: an owner of another protocol is refused here, before any call.
        if (m.welcome.protocol !== OWNER_PROTOCOL) return settle({ kind: 'refused', owner: m.welcome });
        settle({ kind: 'connected', connection, owner: m.welcome, readOnlyTools: m.readOnlyTools ?? [] });
      });
    });
  }

  request(call: Call): Promise<unknown> {
    if (this.closed) return Promise.reject(new OwnerGoneError());
    if (this.leaving) return Promise.reject(new NotRunError('the store owner is leaving; ask the next one'));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      send(this.socket, { id, call });
    });
  }

  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.closedHandlers.push(fn);
  }

  close(): void {
    this.socket.end();
    this.socket.destroy();
  }

  private answer(reply: Reply | { bye: true }): void {
    if ('bye' in reply) {
      this.leaving = true;
      if (!this.pending.size) this.close();
      return;
    }
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if ('error' in reply) {
      if (reply.notRun) waiting.reject(new NotRunError(reply.error));
      else waiting.reject(reply.refused ? new WriteRefusedError(reply.refused.reason, reply.refused.reason, reply.refused.budget as WriteRefusedError['budget']) : new Error(reply.error));
    } else waiting.resolve(reply.result);
    if (this.leaving && !this.pending.size) this.close();
  }

  private fail(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.pending.values()) w.reject(new OwnerGoneError());
    this.pending.clear();
    for (const fn of this.closedHandlers.splice(0)) fn();
  }
}
