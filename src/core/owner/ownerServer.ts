import * as net from 'node:net';
import type { Services } from '../services';
import { TOOLS } from '../tools/registry';
import type { StoreRole } from '../tools/toolDefinition';
import { errorReply, runCall } from './ownerDispatch';
import { NotRunError } from './ownerConnection';
import { OWNER_PROTOCOL, readLines, send, type Call, type McpChannel, type McpSessionOptions, type Peer, type Request } from './protocol';
import type { StoreAccess } from './storeAccess';

/** How long a client gets to hang up after the goodbye. */
const BYE_TIMEOUT_MS = 2_000;

export interface OwnerServerHooks {
  /** A VS Code window asked for the store: hand it over, then answer. */
  handover(claim: string): Promise<void>;
  /**
   * Runs an MCP session for a relay over `channel`, its store calls made through `access` (so
   * they are counted and drained like any client's). Unset where no MCP server is loaded (a
   * VS Code window): a relay is then welcomed as a plain client, and serves MCP itself.
   */
  mcpSession?: ((channel: McpChannel, access: StoreAccess, options: McpSessionOptions) => void) | undefined;
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
    let session: McpChannel | undefined;
    readLines(socket, (message) => {
      if (session) return session.onmessage?.(message);
      if (!client) {
        const { hello, mcp } = message as { hello?: Peer; mcp?: McpSessionOptions };
        if (!hello || hello.protocol !== OWNER_PROTOCOL) {
          const what = hello ? `owner protocol ${hello.protocol} (build ${hello.build})` : 'no hello';
          send(socket, { refused: { reason: `this owner (pid ${this.me.pid}, build ${this.me.build}) speaks owner protocol ${OWNER_PROTOCOL}; the client sent ${what}`, owner: this.me } });
          socket.end();
          return;
        }
        client = hello;
        // Which tools only read: a relay asks a call of one of them again of the next owner when this one dies before answering.
        const readOnlyTools = TOOLS.filter((t) => t.effects.readOnly).map((t) => t.name);
        const startSession = this.hooks.mcpSession;
        if (mcp && startSession) {
          send(socket, { welcome: this.me, readOnlyTools, mcp: true });
          session = relayChannel(socket);
          startSession(session, this.sessionAccess(hello), mcp);
          return;
        }
        send(socket, { welcome: this.me, readOnlyTools });
        return;
      }
      void this.answer(socket, message as Request, client);
    });
  }

  /** A relay's store calls, run as a client's are: counted for the drain, "not run" once draining. */
  private sessionAccess(client: Peer): StoreAccess {
    const run = (call: Call) => this.run(call, client);
    return {
      callTool: async (name, input, ctx) => (await run({ op: 'tool', name, input, client: ctx.client, workspace: ctx.workspace })) as object,
      listResources: async (offset, limit) => (await run({ op: 'resources.list', offset, limit })) as Awaited<ReturnType<StoreAccess['listResources']>>,
      readResource: async (uri) => (await run({ op: 'resources.read', uri })) as Awaited<ReturnType<StoreAccess['readResource']>>,
      connectionSeen: async (name) => void (await run({ op: 'connection.seen', name })),
    };
  }

  private async run(call: Call, client: Peer): Promise<unknown> {
    if (this.draining) throw new NotRunError('the store owner is handing the store over; ask the next one');
    this.inFlight++;
    try {
      return await runCall(await this.services, call, this.clientRole(client));
    } finally {
      if (--this.inFlight === 0) for (const r of this.idle.splice(0)) r();
    }
  }

  private clientRole(client: Peer): StoreRole {
    return { owner: { pid: this.me.pid, kind: this.me.kind, build: this.me.build }, this_process: 'client', pid: client.pid };
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
    try {
      send(socket, { id, result: await this.run(call, client) });
    } catch (err) {
      send(socket, err instanceof NotRunError ? { id, error: err.message, notRun: true } : errorReply(id, err));
    }
  }
}

/** A relay's socket as an MCP channel: lines read before the session listens are kept for it. */
function relayChannel(socket: net.Socket): McpChannel {
  const early: unknown[] = [];
  let listener: ((message: unknown) => void) | undefined;
  const channel: McpChannel = {
    send: (message) => send(socket, message),
    close: () => socket.end(),
    get onmessage() {
      return listener ?? ((message: unknown) => void early.push(message));
    },
    set onmessage(fn) {
      listener = fn;
      if (fn) for (const m of early.splice(0)) fn(m);
    },
  };
  socket.on('close', () => channel.onclose?.());
  return channel;
}
