import * as net from 'node:net';
import type { Services } from '../services';
import { errorReply, runCall } from './ownerDispatch';
import { OWNER_PROTOCOL, readLines, send, type Peer, type Request } from './protocol';

/**
 * The owner's side of the socket: greets each client (refusing one of another protocol before
 * it can ask anything), then runs its calls on the owner's services, in the order they come.
 */
export class OwnerServer {
  private readonly sockets = new Set<net.Socket>();
  private inFlight = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly server: net.Server,
    private readonly me: Peer & { home: string },
    private readonly services: Promise<Services>,
  ) {
    server.on('connection', (socket) => this.serve(socket));
  }

  clients(): number {
    return this.sockets.size;
  }

  /** Stops taking calls, lets the ones running finish, then closes every connection. */
  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.inFlight) await new Promise<void>((r) => this.idle.push(r));
    for (const s of this.sockets) s.destroy();
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
    this.inFlight++;
    try {
      const role = { owner: { pid: this.me.pid, kind: this.me.kind, build: this.me.build }, this_process: 'client' as const, pid: client.pid };
      const result = await runCall(await this.services, request.call, role);
      send(socket, { id: request.id, result });
    } catch (err) {
      send(socket, errorReply(request.id, err));
    } finally {
      if (--this.inFlight === 0) for (const r of this.idle.splice(0)) r();
    }
  }
}
