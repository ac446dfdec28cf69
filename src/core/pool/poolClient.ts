import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { isRefusal, refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { appliedAmong, pulledSeq, type PoolPulled, type PulledOperation } from './poolSchema';
import { pgConnection } from './poolConfig';
import { poolProblem } from './poolRefusal';
import { teamRole } from './poolServer';
import type { PoolStateFile } from './poolState';
import { pullBlobs, pushBlobs } from './poolBlobs';
import { blobsOf, portableOperation, teamOfOperation } from './teamScope';

export interface PoolTarget {
  /** postgres://user@host:port/db?sslmode=… (TLS follows sslmode, as in libpq). */
  url: string;
  team: string;
  /** From VS Code's SecretStorage; otherwise pg reads PGPASSWORD, then ~/.pgpass. */
  password?: string | undefined;
}

export type PoolState = 'connecting' | 'connected' | 'behind' | 'offline' | 'refused' | 'stopped';

export interface PoolStatus {
  state: PoolState;
  team: string;
  /** Other machines' operations on the pool that this store has not pulled yet (at the last look). */
  behind: number;
  /** This store's team operations not yet on the pool (at the last look). */
  unpushed: number;
  pushed: number;
  pulled: number;
  reason?: string;
}

export interface PoolClientOptions {
  /** Operations per push transaction and per pulled journal line. */
  batchSize?: number;
  /** How often a live client looks for this store's new writes. */
  pollMs?: number;
  /** The longest wait between reconnection attempts while offline. */
  maxRetryMs?: number;
  onStatus?: (status: PoolStatus) => void;
}

/** The pool's id of an operation: the hash of what is sent, so a push repeated after a crash is the same row. */
export function poolOperationId(body: string): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 32);
}

/** How far the journal may be read past the recorded push offset, with nothing pushed, before the offset is recorded. */
const RECORD_AFTER_BYTES = 4 * 1024 * 1024;

function channelOf(team: string): string {
  return teamRole(team);
}

interface Pending {
  id: string;
  at: number;
  body: string;
  end: number;
  /** The blobs the operation names, pushed in the same transaction. */
  blobs: string[];
}

/**
 * One store's link to its team's pool. The store stays the only thing tools read: a push sends
 * this store's team-scope operations (read back from its journal), a pull journals the others'
 * operations here as `pool.pulled` lines, applied by the same appliers as any journal line.
 * Everything works offline; a live client reconnects and catches up in batches.
 */
export class PoolClient {
  private client: Client | undefined;
  private readonly batchSize: number;
  private status: PoolStatus;
  private stopped = false;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private retryMs = 500;
  private readonly user: string | undefined;
  private readonly origin: string;
  /** The journal offset the last push read to (what the poll compares the store's version with). */
  private scannedTo = 0;

  constructor(
    private readonly store: Store,
    private readonly target: PoolTarget,
    private readonly state: PoolStateFile,
    private readonly options: PoolClientOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 2000;
    this.status = { state: 'connecting', team: target.team, behind: 0, unpushed: 0, pushed: 0, pulled: 0 };
    this.user = userOf(target.url);
    this.origin = state.origin();
  }

  get current(): PoolStatus {
    return { ...this.status };
  }

  private setStatus(change: Partial<PoolStatus>): void {
    const next = { ...this.status, ...change };
    if (!('reason' in change) && change.state && change.state !== this.status.state) delete next.reason;
    const changed = JSON.stringify(next) !== JSON.stringify(this.status);
    this.status = next;
    if (changed) this.options.onStatus?.(this.current);
  }

  /**
   * Connects and checks that this user may read the team's rows: a wrong password, a missing
   * team or a user without the team's role is refused with the reason; an unreachable server
   * leaves the client offline.
   */
  async connect(): Promise<true | Refusal> {
    if (this.client) return true;
    let client: Client;
    try {
      client = new Client({ ...pgConnection(this.target.url, this.target.password), keepAlive: true });
    } catch (err) {
      // pg reads the sslrootcert/sslcert/sslkey files as it parses the URL.
      const reason = `the pool's connection settings cannot be used (${(err as Error).message}): check the files sslrootcert, sslcert and sslkey name in the URL or PGSSLROOTCERT`;
      this.setStatus({ state: 'refused', reason });
      return refuse(reason);
    }
    client.on('error', (err) => this.lost(err));
    client.on('end', () => this.lost(new Error('Connection terminated')));
    client.on('notification', (n) => {
      // This store's own pushes come back on the channel too; they hold nothing to pull.
      if (!n.payload?.endsWith(` ${this.origin}`)) this.kick({ pull: true });
    });
    try {
      await client.connect();
      const team = this.target.team;
      const r = await client.query<{ exists: boolean; member: boolean }>(
        `SELECT r.oid IS NOT NULL AS exists, coalesce(pg_has_role(current_user, r.oid, 'MEMBER'), false) AS member
         FROM (SELECT $1::name AS n) q LEFT JOIN pg_roles r ON r.rolname = q.n`,
        [teamRole(team)],
      );
      const row = r.rows[0];
      if (!row?.exists) throw refusalError(`the pool has no team "${team}" (no role ${teamRole(team)} on the server): ask its administrator to create it (docs/team-pool.md)`);
      if (!row.member) throw refusalError(`user "${this.user ?? '?'}" is not a member of team "${team}" (role ${teamRole(team)}): nothing of the team can be read or written until the administrator grants it`);
      const seen = await client.query('SELECT 1 FROM recollect.teams WHERE team = $1', [team]);
      if (!seen.rowCount) throw refusalError(`team "${team}" has a role on the server but no row in recollect.teams: the administrator runs its set-up again (docs/team-pool.md)`);
      await client.query(`LISTEN "${channelOf(team)}"`);
      this.client = client;
      this.retryMs = 500;
      this.setStatus({ state: 'connected' });
      return true;
    } catch (err) {
      client.removeAllListeners('end');
      client.removeAllListeners('notification');
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      const problem = (err as RefusalError).refusal ? { kind: 'refused' as const, reason: (err as RefusalError).refusal } : poolProblem(err, this.user);
      this.setStatus({ state: problem.kind, reason: problem.reason });
      return refuse(problem.reason);
    }
  }

  private lost(err: Error): void {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    this.setStatus({ state: 'offline', reason: poolProblem(err, this.user).reason });
    this.scheduleRetry();
  }

  /** Pushes, then pulls, until both sides are level (or only one of them). */
  async sync(what: { push: boolean; pull: boolean } = { push: true, pull: true }): Promise<{ pushed: number; pulled: number } | Refusal> {
    const connected = await this.connect();
    if (connected !== true) return connected;
    try {
      const pushed = what.push ? await this.push() : 0;
      const pulled = what.pull ? await this.pull() : 0;
      if (what.pull) this.setStatus({ state: 'connected', behind: 0 });
      return { pushed, pulled };
    } catch (err) {
      const refusal = (err as RefusalError).refusal;
      const problem = refusal ? { kind: 'refused' as const, reason: refusal } : poolProblem(err, this.user);
      if (problem.kind === 'offline') this.lost(err as Error);
      this.setStatus({ state: problem.kind, reason: problem.reason });
      return refuse(problem.reason);
    }
  }

  /** This store's team operations from its journal past the pushed offset, and where the read ended. */
  private pending(from: number): { ops: Pending[]; scannedTo: number } {
    const db = this.store.db;
    const team = this.target.team;
    const ops: Pending[] = [];
    const scannedTo = this.store.readOperations(from, (op, end) => {
      if (teamOfOperation(op, db) !== team) return;
      const portable = portableOperation(op);
      const body = JSON.stringify(portable);
      ops.push({ id: poolOperationId(body), at: op.at, body, end, blobs: blobsOf(portable) });
    });
    return { ops, scannedTo };
  }

  private async push(): Promise<number> {
    const client = this.need();
    const recorded = this.state.read().pushedOffset;
    // What this client already read past the recorded offset (lines with nothing to push) is not read again.
    const from = Math.max(recorded, this.scannedTo);
    const { ops, scannedTo } = this.pending(from);
    this.scannedTo = ops.length ? from : scannedTo;
    this.setStatus({ unpushed: ops.length });
    let sent = 0;
    for (let i = 0; i < ops.length; i += this.batchSize) {
      const batch = ops.slice(i, i + this.batchSize);
      await this.pushBatch(client, this.origin, batch);
      sent += batch.length;
      const last = i + this.batchSize >= ops.length;
      // The offset moves only after the server committed: a crash before re-sends rows it ignores.
      this.state.update({ pushedOffset: last ? scannedTo : (batch[batch.length - 1] as Pending).end });
      this.setStatus({ unpushed: ops.length - sent, pushed: this.status.pushed + batch.length });
    }
    this.scannedTo = scannedTo;
    // With nothing to push, the offset is recorded only now and then: a pulled batch is a line of
    // its own, and recording (two fsyncs) after each would cost more than re-reading them at a start.
    if (!ops.length && scannedTo - recorded >= RECORD_AFTER_BYTES) this.state.update({ pushedOffset: scannedTo });
    return sent;
  }

  /**
   * One statement locks the team's row (the lock orders pushes, so numbers are handed out in
   * commit order), inserts the batch numbered from the team's last sequence, moves the sequence
   * and queues the notification. Sent as separate statements, each round trip held the team's
   * lock; with ten machines pushing, the pushes queued behind it. A batch whose operations name
   * blobs sends them first in the same transaction, before the lock is taken, so a push that
   * dies before its commit leaves neither.
   */
  private async pushBatch(client: Client, origin: string, batch: readonly Pending[]): Promise<void> {
    const team = this.target.team;
    const hashes = batch.flatMap((p) => p.blobs);
    const numbered = () =>
      client.query<{ last_seq: string }>(
        `WITH locked AS (SELECT last_seq FROM recollect.teams WHERE team = $1 FOR UPDATE),
         inserted AS (
           INSERT INTO recollect.ops(team, seq, op_id, origin, at, body)
           SELECT $1, locked.last_seq + u.n, u.id, $2, u.at, u.body
           FROM locked, unnest($3::text[], $4::bigint[], $5::text[]) WITH ORDINALITY AS u(id, at, body, n)
           ON CONFLICT (team, op_id) DO NOTHING
         ),
         moved AS (UPDATE recollect.teams SET last_seq = (SELECT last_seq FROM locked) + $6 WHERE team = $1 RETURNING last_seq)
         SELECT last_seq, pg_notify($7, last_seq || ' ' || $2) FROM moved`,
        [team, origin, batch.map((p) => p.id), batch.map((p) => p.at), batch.map((p) => p.body), batch.length, channelOf(team)],
      );
    const invisible = () => refusalError(`team "${team}" is not visible to this user on the pool`);
    if (!hashes.length) {
      if (!(await numbered()).rows.length) throw invisible();
      return;
    }
    await client.query('BEGIN');
    try {
      await pushBlobs(client, team, this.store.blobs, hashes);
      if (!(await numbered()).rows.length) throw invisible();
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** How many of the others' operations the pool holds past what this store pulled. */
  async behind(): Promise<number> {
    const client = this.need();
    const origin = this.origin;
    const r = await client.query<{ n: string }>('SELECT count(*) AS n FROM recollect.ops WHERE team = $1 AND seq > $2 AND origin <> $3', [this.target.team, pulledSeq(this.store.db, this.target.team), origin]);
    return Number(r.rows[0]?.n ?? 0);
  }

  private async pull(): Promise<number> {
    const client = this.need();
    const team = this.target.team;
    const origin = this.origin;
    const fetch = (after: number) =>
      client.query<{ seq: string; op_id: string; origin: string; body: string }>(
        'SELECT seq, op_id, origin, body FROM recollect.ops WHERE team = $1 AND seq > $2 AND origin <> $3 ORDER BY seq LIMIT $4',
        [team, after, origin, this.batchSize],
      );
    let applied = 0;
    // Counted only when a batch comes back full (a catch-up): a live pull of a few rows needs no count.
    let left: number | undefined;
    let next = fetch(pulledSeq(this.store.db, team));
    for (;;) {
      const r = await next;
      if (!r.rows.length) break;
      const ops: PulledOperation[] = r.rows.map((row) => ({ id: row.op_id, seq: Number(row.seq), origin: row.origin, op: JSON.parse(row.body) }));
      const upTo = (ops[ops.length - 1] as PulledOperation).seq;
      // Content first: the blobs are on disk before the line that names them is journaled.
      await pullBlobs(client, team, this.store.blobs, ops.flatMap((o) => blobsOf(o.op)));
      const full = r.rows.length >= this.batchSize;
      // Counted before the next fetch starts: a connection runs one query at a time.
      const counted = full && left === undefined ? await this.behind() : undefined;
      if (counted) this.setStatus({ state: 'behind', behind: counted });
      // A catch-up asks for the next batch before applying this one, so the server and the
      // network work while this process applies. The cursor this batch leaves is upTo.
      if (full) {
        next = fetch(upTo);
        next.catch(() => undefined); // awaited in the next round; a failure there is the one reported
      }
      applied += await this.store.commit((db) => {
        // Decided under the store's lock: another process of this machine may have pulled them already.
        const known = appliedAmong(db, ops.map((o) => o.id));
        const fresh = ops.filter((o) => !known.has(o.id));
        if (!fresh.length && upTo <= pulledSeq(db, team)) return { result: 0 };
        const op: PoolPulled = { op: 'pool.pulled', at: this.store.now, team, upTo, ops: fresh };
        return { op, result: fresh.length };
      });
      if (!full) {
        this.setStatus({ state: 'connected', behind: 0, pulled: this.status.pulled + ops.length });
        break;
      }
      left = Math.max(0, (counted ?? left ?? 0) - ops.length);
      this.setStatus({ behind: left, pulled: this.status.pulled + ops.length, ...(left > 0 ? { state: 'behind' as const } : {}) });
    }
    return applied;
  }

  private need(): Client {
    if (!this.client) throw Object.assign(new Error('Connection terminated'), { code: '08003' });
    return this.client;
  }

  /**
   * Keeps the store and the pool level until stopped: LISTEN/NOTIFY brings the others' writes,
   * a look at the journal every pollMs (one stat) brings this store's, and a lost server is
   * retried with a growing wait, then caught up in batches.
   */
  start(): void {
    this.stopped = false;
    const poll = () => {
      if (this.stopped) return;
      void this.store.db; // takes in this machine's other processes' writes
      if (this.client && this.store.version > this.scannedTo) this.kick({ push: true });
      this.timer = setTimeout(poll, this.options.pollMs ?? 100);
      this.timer.unref();
    };
    this.kick({ push: true, pull: true });
    poll();
  }

  private retryTimer: NodeJS.Timeout | undefined;
  private wanted = { push: false, pull: false };

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.options.maxRetryMs ?? 30_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick({ push: true, pull: true });
    }, wait);
    this.retryTimer.unref();
  }

  /** Runs a sync now, or once more right after the one running (requests coalesce). */
  kick(what: { push?: boolean; pull?: boolean } = { push: true, pull: true }): void {
    if (this.stopped) return;
    this.wanted = { push: this.wanted.push || !!what.push, pull: this.wanted.pull || !!what.pull };
    if (this.running) return;
    this.running = (async () => {
      while (!this.stopped && (this.wanted.push || this.wanted.pull)) {
        const now = this.wanted;
        this.wanted = { push: false, pull: false };
        const r = await this.sync(now);
        if (isRefusal(r)) {
          if (this.status.state === 'offline') this.scheduleRetry();
          break;
        }
      }
    })().finally(() => (this.running = undefined));
  }

  /** Waits for the sync running now, if any (tests and the CLI). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.idle();
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
    this.setStatus({ state: 'stopped' });
  }
}

interface RefusalError extends Error {
  refusal: string;
}

function refusalError(reason: string): RefusalError {
  return Object.assign(new Error(reason), { refusal: reason });
}

function userOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return decodeURIComponent(u.username) || process.env.PGUSER || undefined;
  } catch {
    return undefined;
  }
}
