import * as net from 'node:net';
import * as path from 'node:path';
import { OwnerLock } from '../core/owner/ownerLock';
import { ownerSocketPath } from '../core/owner/ownerSocket';
import { MCP_NOT_RUN, OWNER_PROTOCOL, readLines, send, writeInDoubtReason, type McpSessionOptions, type Peer } from '../core/owner/protocol';
import { refuse } from '../core/refusal';
import { MAX_REQUEST_BYTES, requestTooLarge } from '../core/tools/requestLimit';
import { BoundedLines, oversizedAnswer } from './boundedLines';

/**
 * `recollect mcp` as a thin relay: while an owner serves the store, this process only pipes its
 * stdio's JSON-RPC lines to an MCP session the owner runs for it over the owner socket, so it
 * never loads the MCP SDK, the tools or the store (the full CLI bundle). Only light modules may
 * be imported here: this file is the small entry's whole world.
 *
 * When the owner goes, the session moves to the next one without the MCP client seeing more
 * than a delay: the client's `initialize` is replayed under an id of the relay's own (its
 * answer is not passed on), its requests keep their ids, a read that was waiting is asked again
 * and a write that was waiting is answered "may or may not have been saved" (never sent twice).
 * The relay that wins the election loads the full server into itself and runs the session here.
 */

type Message = Record<string, unknown>;
type Id = string | number;

/** Where the session runs: at the owner over the socket, or in this process once it loaded the full server. */
export interface Upstream {
  send(message: Message): void;
  close(): Promise<void>;
}

export interface RelayOptions {
  home: string;
  build: string;
  session: McpSessionOptions;
  /**
   * Loads the full server into this process and runs the session in it, its answers handed to
   * `toClient`. `claim`: the owner.lock text this process just created (it won the election);
   * undefined, the full server's own election decides (an owner that runs no MCP sessions).
   */
  loadFull: (claim: string | undefined, toClient: (message: Message) => void) => Promise<Upstream>;
  log: (line: string) => void;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/** A hello unanswered this long: the owner does not serve (the full server's election decides what then). */
const HELLO_TIMEOUT_MS = 5_000;
/** Nobody serving the socket this long after the owner went: the full server's election takes it from here. */
const NOBODY_SERVES_MS = 5_000;

type Reached = { kind: 'served'; socket: net.Socket; owner: Peer; readOnlyTools: string[] } | { kind: 'notServed' } | { kind: 'unreachable' };

/** What an election found: an owner that runs this session, this process as the owner (its claim made), or a case for the full CLI. */
type Elected = { kind: 'served'; reached: Reached & { kind: 'served' } } | { kind: 'claimed'; claim: string } | { kind: 'full' };

/**
 * Runs `recollect mcp` through the relay until the client closes stdin: at an owner that runs
 * MCP sessions, or here when this process wins the election (it loads the full server, with its
 * claim made). False, with nothing read from stdin, when the full CLI must decide (an owner that
 * runs no MCP sessions or speaks another protocol, a home that cannot hold a claim, a claim
 * nobody serves): it runs `recollect mcp` as it always has.
 */
export async function relayMcp(opts: RelayOptions): Promise<boolean> {
  const relay = new McpRelay(opts);
  const elected = await relay.elect();
  if (elected.kind === 'full') return false;
  await relay.run(elected);
  return true;
}

class McpRelay {
  private readonly me: Peer;
  private readonly socketPath: string;
  private readonly stdout: NodeJS.WritableStream;
  private upstream: Upstream | undefined;
  /** The current upstream has the session (initialized, or the client's own initialize sent to it). */
  private ready = false;
  /** The owner said goodbye or did not run a call: nothing more is sent to it, and it is left once every answer is in. */
  private leaving = false;
  private onHangUp: (() => void) | undefined;
  /** Client messages waiting for an upstream that has the session. */
  private queue: Message[] = [];
  /** Client requests sent to the current upstream and not yet answered, by id. */
  private readonly pending = new Map<Id, Message>();
  private initialize: Message | undefined;
  private initializeAnswered = false;
  private initialized: Message | undefined;
  private sentInitialized = false;
  private replayId: string | undefined;
  private replays = 0;
  private readOnly = new Set<string>();
  private owner: Peer | undefined;
  private ended = false;
  /** Calls the owners did not run since one last answered: each hang-up for one waits longer before asking again (a handover closing a large store takes seconds). */
  private notRunInARow = 0;
  /** When the owner was last found gone, for the takeover's log line. */
  private lostAt: number | undefined;

  constructor(private readonly opts: RelayOptions) {
    this.me = { protocol: OWNER_PROTOCOL, build: opts.build, pid: process.pid, kind: 'mcp' };
    this.socketPath = ownerSocketPath(opts.home);
    this.stdout = opts.stdout ?? process.stdout;
  }

  async run(elected: Elected): Promise<void> {
    await this.take(elected);
    const stdin = this.opts.stdin ?? process.stdin;
    const lines = new BoundedLines(
      MAX_REQUEST_BYTES,
      (line) => this.fromClientLine(line),
      (over) => {
        const answer = oversizedAnswer(over, MAX_REQUEST_BYTES, requestTooLarge(over.bytes, MAX_REQUEST_BYTES));
        if (answer) this.toClient(answer);
      },
    );
    stdin.on('data', (chunk: Buffer) => lines.push(chunk));
    await new Promise<void>((resolve) => {
      stdin.once('end', resolve);
      stdin.once('close', resolve);
      stdin.once('error', resolve);
    });
    this.ended = true;
    await this.upstream?.close();
  }

  /** Connects to the owner socket and asks for an MCP session; `onMessage` gets every later line. */
  reach(onMessage: (message: Message) => void): Promise<Reached> {
    return new Promise((resolve) => {
      let socket: net.Socket;
      try {
        socket = net.createConnection(this.socketPath);
      } catch {
        // A sandbox that forbids sockets throws here instead of emitting 'error'.
        resolve({ kind: 'unreachable' });
        return;
      }
      let greeted = false;
      const settle = (r: Reached) => {
        if (greeted) return;
        greeted = true;
        clearTimeout(timer);
        if (r.kind !== 'served') socket.destroy();
        resolve(r);
      };
      const timer = setTimeout(() => settle({ kind: 'notServed' }), HELLO_TIMEOUT_MS);
      socket.on('error', () => settle({ kind: 'unreachable' }));
      socket.on('close', () => settle({ kind: 'unreachable' }));
      socket.on('connect', () => send(socket, { hello: this.me, mcp: this.opts.session }));
      readLines(socket, (message) => {
        if (greeted) return onMessage(message as Message);
        const m = message as { welcome?: Peer; readOnlyTools?: string[]; mcp?: true };
        // Refused, another protocol, or an owner that runs no MCP sessions: the full server deals with each as today.
        if (!m.welcome || m.welcome.protocol !== OWNER_PROTOCOL || m.mcp !== true) return settle({ kind: 'notServed' });
        settle({ kind: 'served', socket, owner: m.welcome, readOnlyTools: m.readOnlyTools ?? [] });
      });
    });
  }

  fromUpstream(message: Message): void {
    if (message.bye === true) {
      this.leave();
      return;
    }
    const id = message.id as Id | undefined;
    const isAnswer = id !== undefined && message.method === undefined;
    if (!isAnswer) {
      this.toClient(message); // the server's notifications and requests
      return;
    }
    if (this.replayId !== undefined && id === this.replayId) {
      this.replayId = undefined;
      this.sessionReady();
      return;
    }
    const asked = this.pending.get(id);
    if (!asked) return; // an answer this relay already gave (a write answered "in doubt")
    this.pending.delete(id);
    const error = message.error as { code?: unknown; data?: { notRun?: unknown } } | undefined;
    if (error?.code === MCP_NOT_RUN && error.data?.notRun === true) {
      // The owner is handing over or leaving: this call goes to the next owner, write or not.
      this.queue.unshift(asked);
      this.notRunInARow++;
      this.leave();
      return;
    }
    this.notRunInARow = 0;
    if (asked === this.initialize) this.initializeAnswered = true;
    this.toClient(message);
    if (this.leaving && !this.pending.size) this.onHangUp?.();
  }

  private fromClientLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // as the stdio transport does: a line that is not JSON is dropped
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
    const m = message as Message;
    if (m.method === 'initialize' && m.id !== undefined) this.initialize = m;
    if (m.method === 'notifications/initialized') this.initialized = m;
    if (this.ready && !this.leaving) this.sendUp(m);
    else this.queue.push(m);
  }

  private sendUp(m: Message): void {
    if (m.method === 'notifications/initialized') {
      if (this.sentInitialized) return;
      this.sentInitialized = true;
    }
    if (typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')) this.pending.set(m.id, m);
    this.upstream?.send(m);
  }

  private toClient(message: Message): void {
    this.stdout.write(JSON.stringify(message) + '\n');
  }

  private attachRemote(reached: Reached & { kind: 'served' }): void {
    const { socket } = reached;
    this.owner = reached.owner;
    this.readOnly = new Set(reached.readOnlyTools);
    socket.on('error', () => undefined); // its close follows
    const upstream: Upstream = {
      send: (m) => void socket.write(JSON.stringify(m) + '\n'),
      close: () =>
        new Promise<void>((resolve) => {
          if (socket.destroyed) return resolve();
          socket.once('close', () => resolve());
          socket.end();
        }),
    };
    socket.once('close', () => this.lost(upstream));
    this.onHangUp = () => socket.end();
    this.attach(upstream);
  }

  /** A new upstream: the session is replayed to it (when the client's initialize was answered before), then what waited is sent. */
  private attach(upstream: Upstream): void {
    this.upstream = upstream;
    this.leaving = false;
    this.sentInitialized = false;
    if (this.initialize && this.initializeAnswered) {
      this.ready = false;
      this.replayId = `recollect-relay-initialize-${++this.replays}`;
      upstream.send({ jsonrpc: '2.0', id: this.replayId, method: 'initialize', params: this.initialize.params });
      return;
    }
    this.sessionReady();
  }

  private sessionReady(): void {
    this.ready = true;
    if (this.initialize && this.initializeAnswered && this.initialized) this.sendUp(this.initialized);
    while (this.queue.length && this.ready && !this.leaving) this.sendUp(this.queue.shift() as Message);
  }

  private leave(): void {
    this.leaving = true;
    if (!this.pending.size) this.onHangUp?.();
  }

  /** The owner's socket closed (it was killed, or it left): what waited is asked of the next owner, or answered. */
  private lost(upstream: Upstream): void {
    if (this.upstream !== upstream) return;
    this.upstream = undefined;
    this.ready = false;
    this.replayId = undefined;
    this.onHangUp = undefined;
    const resend: Message[] = [];
    for (const m of this.pending.values()) {
      if (m === this.initialize || this.isRead(m)) resend.push(m);
      else this.toClient(inDoubt(m, this.owner));
    }
    this.pending.clear();
    this.queue.unshift(...resend);
    if (this.ended) return;
    this.lostAt = performance.now();
    this.opts.log(`store owner: process ${this.owner?.pid ?? '?'} went away; electing a new one`);
    void this.reelect();
  }

  private isRead(m: Message): boolean {
    if (m.method !== 'tools/call') return true;
    const name = (m.params as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' && this.readOnly.has(name);
  }

  /**
   * Elects as a client does: the one that creates the claim loads the full server and owns the
   * store; the others reach it and relay to it. An owner that runs no MCP sessions (a VS Code
   * window), another protocol's owner, or nobody serving for too long is for the full server.
   */
  async elect(): Promise<Elected> {
    const lock = new OwnerLock(path.join(this.opts.home, 'owner.lock'));
    const since = Date.now();
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      const reached = await this.reach((m) => this.fromUpstream(m));
      if (reached.kind === 'served') return { kind: 'served', reached };
      if (reached.kind === 'notServed' || this.ended) return { kind: 'full' };
      let claimed: boolean;
      try {
        claimed = lock.tryClaim('mcp');
      } catch {
        return { kind: 'full' }; // a home that cannot hold a claim: the full server says why
      }
      const claim = claimed ? lock.ownClaim() : undefined;
      if (claim) return { kind: 'claimed', claim };
      if (Date.now() - since > NOBODY_SERVES_MS) return { kind: 'full' };
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  private take(elected: Elected): Promise<void> {
    if (elected.kind === 'served') {
      this.attachRemote(elected.reached);
      return Promise.resolve();
    }
    return this.runHere(elected.kind === 'claimed' ? elected.claim : undefined);
  }

  private async reelect(): Promise<void> {
    if (this.notRunInARow) await new Promise((r) => setTimeout(r, Math.min(20 * 2 ** this.notRunInARow, 500)));
    const elected = await this.elect();
    if (!this.ended) await this.take(elected);
  }

  private async runHere(claim: string | undefined): Promise<void> {
    const since = (at: number | undefined) => (at === undefined ? '' : ` ${(performance.now() - at).toFixed(0)} ms after the owner went`);
    if (this.owner && !claim) this.opts.log('store owner: the owner runs no MCP sessions for relays; loading the full server');
    const claimed = since(this.lostAt);
    let upstream: Upstream;
    try {
      upstream = await this.opts.loadFull(claim, (m) => this.fromUpstream(m));
      if (this.owner && claim) this.opts.log(`store owner: this relay took over the store: claimed it${claimed}, full server loaded${since(this.lostAt)}`);
    } catch (err) {
      this.opts.log(`cannot load the full server: ${(err as Error).message}`);
      process.exitCode = 1;
      process.exit();
    }
    this.readOnly = new Set();
    this.onHangUp = undefined;
    this.attach(upstream);
  }
}

/** A write whose owner died before answering, answered as the tool's refusal (as a client process answers it). */
function inDoubt(m: Message, owner: Peer | undefined): Message {
  const refusal = refuse(writeInDoubtReason(owner));
  return { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(refusal) }], structuredContent: refusal, isError: true } };
}
