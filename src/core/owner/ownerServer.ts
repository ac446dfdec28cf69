import * as net from 'node:net';
import type { Services } from '../services';
import { errorReply, runCall } from './ownerDispatch';
import { OWNER_PROTOCOL, readLines, send, type Peer, type Request } from './protocol';

/** How long a client gets to hang up after the goodbye. */
const BYE_TIMEOUT_MS = 2_000;

export interface OwnerServerHooks {
  /** A VS Code window asked for the store: hand it over, then answer. */
  handover(claim: string): Promise<void>;
}

/**
 * The owner's side of the socket: greets each client (refusing one of another protocol before
 * it can ask anything), then runs its calls on the owner's services as they come.
 */
export class OwnerServer {
  private readonly sockets = new Set<net.Socket>();
  private inFlight = 0;
  private idle: (() => void)[] = [];
  /** Handing over: calls are answered "not run" so their clients ask the next owner. */
  private draining = false;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly server: net.Server,
    private readonly me: Peer & { home: string },
    private readonly services: Promise<Services>,
    private readonly hooks: OwnerServerHooks,
  ) {
    server.on('connection', (socket) => this.serve(socket));
  }

  /** Stops taking calls and waits for the ones running (not counting the handover asking for it). */
  async drain(): Promise<void> {
    this.draining = true;
    if (this.inFlight) await new Promise<void>((r) => this.idle.push(r));
  }

  /** Stops listening; the socket file goes at once (Node removes it), the connections stay. */
  stopListening(): void {
    if (!this.closed) this.closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Stops listening and, once the calls running have answered, says goodbye on every connection.
   * A client hangs up once each call it sent has its answer (a call read after the goodbye is
   * answered "not run"), so no call is left not knowing whether it ran; one that does not hang up
   * in time is cut off.
   */
  async close(): Promise<void> {
    this.stopListening();
    await this.drain();
    const hungUp = [...this.sockets].map((s) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r()))));
    for (const s of this.sockets) send(s, { bye: true });
    await Promise.race([Promise.all(hungUp), new Promise((r) => setTimeout(r, BYE_TIMEOUT_MS).unref())]);
    for (const s of this.sockets) s.destroy();
    await this.closed;
  }

  private serve(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined); // a client that vanished; its close follows
    let client: Peer | undefined;
    readLines(socket, (message) => {
      if (!client) {
        const hello = (message as { hello?: Peer }).hello;
        if (!hello || hello.protocol !== OWNER_PROTOCOL) {
          const what = hello ? `owner protocol ${hello.protocol} (build ${hello.build})` : 'no hello';
          send(socket, { refused: { reason: `this owner (pid ${this.me.pid}, build ${this.me.build}) speaks owner protocol ${OWNER_PROTOCOL}; the client sent ${what}`, owner: this.me } });
          socket.end();
          return;
        }
        client = hello;
        send(socket, { welcome: this.me });
        return;
      }
      void this.answer(socket, message as Request, client);
    });
  }

  private async answer(socket: net.Socket, request: Request, client: Peer): Promise<void> {
    const { id, call } = request;
    if (this.draining) return send(socket, { id, error: 'the store owner is handing the store over; ask the next one', notRun: true });
    if (call.op === 'handover') {
      try {
        await this.hooks.handover(call.claim);
        send(socket, { id, result: { handedOver: true } });
      } catch (err) {
        send(socket, errorReply(id, err));
      }
      return;
    }
    this.inFlight++;
    try {
      const role = { owner: { pid: this.me.pid, kind: this.me.kind, build: this.me.build }, this_process: 'client' as const, pid: client.pid };
      send(socket, { id, result: await runCall(await this.services, call, role) });
    } catch (err) {
      send(socket, errorReply(id, err));
    } finally {
      if (--this.inFlight === 0) for (const r of this.idle.splice(0)) r();
    }
  }
}
