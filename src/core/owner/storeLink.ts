import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { refuse, type Refusal } from '../refusal';
import type { ResourcePage } from '../resources/memoryResources';
import type { Services } from '../services';
import { WriteRefusedError } from '../store/errors';
import { prepareHome } from '../store/storeHome';
import { STORE_FILES } from '../store/storeOpen';
import { refusalOf } from '../tools/invoke';
import type { StoreRole, ToolContext } from '../tools/toolDefinition';
import { callWrites, runCall } from './ownerDispatch';
import { NotRunError, OwnerConnection, OwnerGoneError } from './ownerConnection';
import { OwnerLock } from './ownerLock';
import { OwnerServer, type OwnerServerHooks } from './ownerServer';
import { ownerSocketPath, prepareSocketFolder, socketLeavesFile } from './ownerSocket';
import { OWNER_PROTOCOL, versionRefusal, writeInDoubtReason, type Call, type Peer, type ProcessKind } from './protocol';
import type { StoreAccess } from './storeAccess';

export interface StoreLinkOptions {
  home: string;
  kind: ProcessKind;
  build: string;
  /** Opens the store in this process: called once this process is the owner (at start or on takeover). */
  open: () => Promise<Services>;
  /** A line for a person (the CLI's stderr, VS Code's output channel). */
  log?: ((line: string) => void) | undefined;
  /**
   * Ask an owner of another kind to hand the store over (the design card: VS Code owns the
   * store while it runs). Only the extension host sets it; an owner that is itself VS Code keeps it.
   */
  askHandover?: boolean | undefined;
  /** Runs a relay's MCP session while this process owns the store (see OwnerServerHooks); unset, relays serve MCP themselves. */
  mcpSession?: OwnerServerHooks['mcpSession'];
  /** The owner.lock text this process already created (a relay that won the election before loading the full server): owned at once. */
  claim?: string | undefined;
}

/** A claim whose holder runs but where nothing listens this long is a reused pid (or an owner that could not listen): taken over. */
const SILENT_OWNER_MS = 5_000;

/** An owner that takes connections but answers no hello this long is reported to the caller, never taken over. */
const SLOW_OWNER_MS = 30_000;

/** A client's call that could not be answered because the owner speaks another protocol. */
export class OwnerRefusedError extends Error {}

/** A write whose owner died before answering: it may or may not be in the journal. */
export class WriteInDoubtError extends Error {}

/**
 * This process's place on a store home: the owner (it holds the database, serves the socket,
 * runs background indexing, checkpoints, compaction and sealing) or a client (it forwards every
 * call to the owner and never opens the database). When the owner dies a client claims the
 * home, opens the store from its snapshot and journal as any open does, and serves the others,
 * which reconnect. A read whose answer was lost is asked again; a write is not (it may have been
 * journaled), and its caller hears so.
 */
export class StoreLink implements StoreAccess {
  private role: 'owner' | 'client' | 'refused' | 'joining' = 'joining';
  private services: Promise<Services> | undefined;
  private server: OwnerServer | undefined;
  private connection: OwnerConnection | undefined;
  private owner: Peer | undefined;
  private refusal: string | undefined;
  private settled: Promise<void>;
  private closing = false;
  private readonly lock: OwnerLock;
  private readonly socketPath: string;
  private readonly me: Peer;
  private readonly roleHandlers: ((role: 'owner' | 'client', takeover: boolean) => void)[] = [];
  /** This process's own calls running on its services, which a handover waits for. */
  private localCalls = 0;
  /** When the owner was last found gone, for the takeover's log line. */
  private lostAt: number | undefined;
  private localIdle: (() => void)[] = [];

  private constructor(private readonly opts: StoreLinkOptions) {
    this.lock = new OwnerLock(path.join(opts.home, 'owner.lock'));
    this.socketPath = ownerSocketPath(opts.home);
    this.me = { protocol: OWNER_PROTOCOL, build: opts.build, pid: process.pid, kind: opts.kind };
    this.settled = this.elect();
  }

  /** Joins the home as its owner or as a client of the process that owns it; calls made meanwhile wait for the election. */
  static start(opts: StoreLinkOptions): StoreLink {
    return new StoreLink(opts);
  }

  /** This process's role once the election settled: 'refused' when the owner speaks another protocol. */
  async ready(): Promise<'owner' | 'client' | 'refused'> {
    for (;;) {
      const settling = this.settled;
      await settling;
      if (settling === this.settled && this.role !== 'joining') return this.role;
    }
  }

  /** Why this process cannot use the store (an owner of another protocol), when it cannot. */
  refusedBecause(): string | undefined {
    return this.role === 'refused' ? this.refusal : undefined;
  }

  get isOwner(): boolean {
    return this.role === 'owner';
  }

  /** The services this process holds, when it is the owner. */
  ownServices(): Promise<Services> | undefined {
    return this.role === 'owner' ? this.services : undefined;
  }

  /** Told each time this process becomes the owner or a client (a takeover makes a client the owner). */
  onRole(fn: (role: 'owner' | 'client', takeover: boolean) => void): void {
    this.roleHandlers.push(fn);
    if (this.role === 'owner' || this.role === 'client') fn(this.role, this.lostAt !== undefined);
  }

  /** Who owns the store, and whether this process is it: memory_status says so. */
  storeRole(): StoreRole {
    const owner = this.role === 'owner' ? this.me : this.owner;
    return {
      owner: owner ? { pid: owner.pid, kind: owner.kind, build: owner.build } : { pid: 0, kind: 'none', build: '' },
      this_process: this.role === 'owner' ? 'owner' : 'client',
      pid: process.pid,
    };
  }

  /** Runs one call here (owner) or at the owner (client), through the one dispatch (ownerDispatch). */
  async call(call: Call): Promise<unknown> {
    for (;;) {
      await this.settled;
      if (this.role === 'refused') {
        // The foreign owner may have gone since: look again before refusing.
        this.settled = this.elect();
        await this.settled;
        if (this.role === 'refused') throw new OwnerRefusedError(this.refusal);
        continue;
      }
      if (this.role === 'owner') return this.runHere(call);
      const connection = this.connection as OwnerConnection;
      try {
        return await connection.request(call);
      } catch (err) {
        if (err instanceof NotRunError) {
          // Handing over: the connection closes in a moment and the next owner is asked.
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        if (!(err instanceof OwnerGoneError)) throw err;
        if (callWrites(call)) {
          throw new WriteInDoubtError(writeInDoubtReason(this.owner));
        }
        // A read: asked again of whoever owns the store next (this process, perhaps).
      }
    }
  }

  private async runHere(call: Call): Promise<unknown> {
    this.localCalls++;
    try {
      return await runCall(await (this.services as Promise<Services>), call, this.storeRole());
    } finally {
      if (--this.localCalls === 0) for (const r of this.localIdle.splice(0)) r();
    }
  }

  async callTool(name: string, input: unknown, ctx: ToolContext): Promise<object> {
    try {
      return (await this.call({ op: 'tool', name, input, client: ctx.client, workspace: ctx.workspace, ...(ctx.callerOpens ? { callerOpens: true as const } : {}) })) as object;
    } catch (err) {
      const refusal = asRefusal(err);
      if (refusal) return refusal;
      throw err;
    }
  }

  async listResources(offset: number, limit: number): Promise<ResourcePage> {
    return (await this.call({ op: 'resources.list', offset, limit })) as ResourcePage;
  }

  async readResource(uri: string): Promise<{ text: string } | Refusal> {
    return (await this.call({ op: 'resources.read', uri })) as { text: string } | Refusal;
  }

  async connectionSeen(name: string): Promise<void> {
    await this.call({ op: 'connection.seen', name });
  }

  /** Leaves the home: an owner stops serving, closes its store (checkpointing it) and gives up its claim, so a client takes over. */
  async close(): Promise<void> {
    this.closing = true;
    await this.settled.catch(() => undefined);
    if (this.role === 'owner') {
      await this.server?.close();
      await this.services?.then((s) => s.store.close(), () => undefined);
      if (socketLeavesFile() && this.lock.held()) fs.rmSync(this.socketPath, { force: true });
      this.lock.release();
    }
    this.connection?.close();
  }

  /** Settles this process's role: claim the home, else connect to the process that has. */
  private async elect(): Promise<void> {
    let silentSince: number | undefined;
    let slowSince: number | undefined;
    const claim = this.opts.claim;
    if (claim !== undefined && this.lock.adopt(claim)) {
      this.opts.claim = undefined;
      await this.listenAsOwner();
      return;
    }
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      if (this.closing) return;
      let claimed: boolean;
      try {
        // Made as the store makes it (0700), so the first process on a new home can claim it.
        if (!prepareHome(this.opts.home, STORE_FILES.journal).writable) throw new Error('read-only');
        claimed = this.lock.tryClaim(this.opts.kind);
      } catch {
        // The home cannot hold a claim (not a folder, read-only): this process opens the store
        // alone, as every process did before owners, and each call says in a sentence what the
        // open found.
        this.becomeOwner(undefined);
        return;
      }
      if (claimed) {
        await this.listenAsOwner();
        return;
      }
      const answer = await OwnerConnection.open(this.socketPath, this.me);
      if (answer.kind === 'connected' && this.opts.askHandover && answer.owner.kind !== 'vscode' && (await this.askHandover(answer.connection, answer.owner))) return;
      if (answer.kind === 'connected') {
        this.connection = answer.connection;
        this.owner = answer.owner;
        this.role = 'client';
        answer.connection.onClose(() => this.ownerLost(answer.connection));
        for (const fn of this.roleHandlers) fn('client', this.lostAt !== undefined);
        return;
      }
      if (answer.kind === 'refused') {
        this.owner = answer.owner;
        this.refusal = versionRefusal(this.opts.home, answer.owner, this.me) + (answer.reason ? ` (The owner said: ${answer.reason}.)` : '');
        this.role = 'refused';
        return;
      }
      // Claimed but not serving: it is starting (a few ms), dead (the next claim removes it), or
      // a live pid with nothing listening for too long (a reused pid). A listener that is slow to
      // answer (a busy owner) is waited for, never taken over: it still holds the store.
      if (!answer.noListener) {
        silentSince = undefined;
        slowSince ??= Date.now();
        if (Date.now() - slowSince > SLOW_OWNER_MS) {
          const holder = this.lock.holder();
          this.refusal = `The Recollect store at ${this.opts.home} is owned by process ${holder?.pid ?? '?'} (${holder?.kind ?? 'unknown'}), which takes connections but has not answered for ${SLOW_OWNER_MS / 1000} s (${answer.problem}). Nothing was read or written; try again, or stop that process.`;
          this.role = 'refused';
          return;
        }
      } else silentSince ??= Date.now();
      if (silentSince !== undefined && Date.now() - silentSince > SILENT_OWNER_MS) {
        const holder = this.lock.holder();
        this.opts.log?.(`store owner: process ${holder?.pid ?? '?'} claims ${this.opts.home} but nothing has listened for it for ${SILENT_OWNER_MS} ms (${answer.problem}); taking over`);
        this.lock.removeIfDead(true);
        silentSince = undefined;
      }
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /** Asks the owner for the store; true when this process now owns it. */
  private async askHandover(connection: OwnerConnection, owner: Peer): Promise<boolean> {
    const claim = OwnerLock.claimText(this.opts.kind);
    try {
      await connection.request({ op: 'handover', claim });
    } catch (err) {
      this.opts.log?.(`store owner: process ${owner.pid} (${owner.kind}, build ${owner.build}) did not hand the store over: ${(err as Error).message}`);
      return false;
    }
    connection.close();
    if (!this.lock.adopt(claim)) return false;
    this.opts.log?.(`store owner: process ${owner.pid} (${owner.kind}) handed the store over to this process`);
    await this.listenAsOwner();
    return true;
  }

  /**
   * Gives the store to the VS Code window that asked: no new call is taken, the running ones
   * finish, the store is closed (checkpointed) and the claim is renamed over to the window in
   * one step; then this process joins as the window's client.
   */
  private async handOver(claim: string): Promise<void> {
    if (this.role !== 'owner' || !this.server || this.closing) throw new Error('this process is not serving as the store owner');
    // A one-shot command holds its services directly until it exits, which is soon; a VS Code
    // window owns the store while it runs (the design card), and runs what only an owner runs
    // (the team pool's sync, background imports) on its own services.
    if (this.opts.kind === 'cli' || this.opts.kind === 'vscode') throw new Error(`a ${this.opts.kind === 'cli' ? 'one-shot command' : 'VS Code window'} keeps the store until it exits`);
    const server = this.server;
    let joined!: () => void;
    this.role = 'joining';
    this.settled = new Promise<void>((r) => (joined = r));
    try {
      await server.drain();
      if (this.localCalls) await new Promise<void>((r) => this.localIdle.push(r));
      await this.services?.then((s) => s.store.close(), () => undefined);
      // Before the claim moves: the window listens on the same path once it has the claim.
      server.stopListening();
      this.lock.handTo(claim);
    } catch (err) {
      // Not handed over: keep serving as before.
      this.role = 'owner';
      joined();
      throw err;
    }
    this.services = undefined;
    this.server = undefined;
    this.opts.log?.('store owner: handed the store over to a VS Code window; joining it as a client');
    // After the answer has gone out: stop listening, then find the new owner as any client does.
    setImmediate(() => {
      void server.close().then(() => {
        const electing = this.elect();
        this.settled = electing;
        void electing.then(joined);
      });
    });
  }

  private async listenAsOwner(): Promise<void> {
    const server = net.createServer();
    try {
      prepareSocketFolder(this.socketPath);
      // Only the claim's holder removes a socket file, so this is one a dead owner left.
      if (socketLeavesFile()) fs.rmSync(this.socketPath, { force: true });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.socketPath, () => {
          server.off('error', reject);
          resolve();
        });
      });
      // Like every file of the store, the user's alone (its folder already keeps others out).
      if (socketLeavesFile()) fs.chmodSync(this.socketPath, 0o600);
    } catch (err) {
      // Owner without a socket: this process still holds the store; clients that cannot reach it wait, then take over.
      this.opts.log?.(`store owner: cannot listen on ${this.socketPath}: ${(err as Error).message}`);
      this.becomeOwner(undefined);
      return;
    }
    this.becomeOwner(server);
  }

  private becomeOwner(server: net.Server | undefined): void {
    this.role = 'owner';
    this.connection = undefined;
    this.services = this.opts.open();
    this.services.catch(() => undefined); // reported to each call
    const lostAt = this.lostAt;
    if (lostAt !== undefined) {
      const elected = performance.now() - lostAt;
      void this.services.then(() => this.opts.log?.(`store owner: this process took over the store: claimed ${elected.toFixed(0)} ms after the owner went, store open ${(performance.now() - lostAt).toFixed(0)} ms after`), () => undefined);
    }
    if (server) this.server = new OwnerServer(server, { ...this.me, home: this.opts.home }, this.services, { handover: (claim) => this.handOver(claim), mcpSession: this.opts.mcpSession });
    for (const fn of this.roleHandlers) fn('owner', lostAt !== undefined);
  }

  private ownerLost(connection: OwnerConnection): void {
    if (this.closing || this.connection !== connection) return;
    this.opts.log?.(`store owner: process ${this.owner?.pid ?? '?'} went away; electing a new one`);
    this.lostAt = performance.now();
    this.role = 'joining';
    this.settled = this.elect();
  }
}

/** A failure a tool's caller reads as a refusal: a store that refused the write, an owner of another protocol, a write in doubt. */
export function asRefusal(err: unknown): Refusal | undefined {
  if (err instanceof WriteRefusedError) return refusalOf(err);
  if (err instanceof OwnerRefusedError || err instanceof WriteInDoubtError) return refuse(err.message);
  return undefined;
}
