import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolStateFile } from '../../src/core/pool/poolState';
import { joinPool } from '../../src/core/pool/poolJoin';
import { resolvePool } from '../../src/core/pool/poolConfig';
import { isRefusal } from '../../src/core/refusal';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { CLI } from './helpers/mcpClient';
import { memberPassword, startPoolPostgres, type PostgresServer } from './helpers/postgres';
import { openTemp, tempHome } from './helpers/tempStore';
import { closeMachines, exited, poolMachine, waitUntil, type Machine } from './helpers/poolMachines';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TEAM = 'core';
const MEMBERS = ['alice', 'bob', 'carol', 'dave', 'erin'];
const password = memberPassword;

let pg: PostgresServer;

beforeAll(async () => {
  pg = await startPoolPostgres([{ team: TEAM, members: MEMBERS }, { team: 'other', members: ['mallory'] }]);
}, 60_000);

afterAll(() => pg?.remove());

function machine(user: string, home = tempHome(`pool-${user}`), now?: () => number): Promise<Machine> {
  return poolMachine(pg, TEAM, user, home, { ...(now ? { now } : {}), client: { pollMs: 50, maxRetryMs: 500 } });
}

function teamFacts(m: Machine): { id: string; object: string; current: boolean }[] {
  return queryRows(m.services.store.db, "SELECT id, object, superseded_at IS NULL AS current FROM facts WHERE scope LIKE 'team:%' ORDER BY id").map((r) => ({ id: String(r.id), object: String(r.object), current: Number(r.current) === 1 }));
}

function count(m: Machine, sql: string): number {
  return Number(queryScalar(m.services.store.db, sql));
}

function write(m: Machine, label: string, i: number, scope = `team:${TEAM}`) {
  return m.services.memory.remember({ subject: `${label}-${i}`, predicate: 'is', object: `value ${i} from ${m.user}`, statement: `${label} ${i} noted by ${m.user}`, scope }, m.user);
}

describe('team pool over a real PostgreSQL', () => {
  it('two stores converge: every team write everywhere, none twice; global writes and chat history stay home', async () => {
    const [a, b] = [await machine('alice'), await machine('bob')];
    try {
      for (let i = 0; i < 20; i++) await write(a, 'a', i);
      for (let i = 0; i < 15; i++) await write(b, 'b', i);
      await write(a, 'private', 0, 'global');
      await a.services.memory.remember({ statement: 'a team note of alice', scope: `team:${TEAM}` }, 'alice');
      const door = async (m: Machine, scope?: string) => ((await m.services.recall.getContext({ query: 'value noted', ...(scope ? { scope } : {}) })) as { door: string }).door;
      expect(await door(b, `team:${TEAM}`)).toBe("this machine's store");
      for (const m of [a, b, a, b]) {
        const r = await m.pool.sync();
        expect(r).toMatchObject({ pushed: expect.any(Number) });
      }
      // The doors: a team scope's answer comes from the pool mirror once pulled; an answer with no
      // record names what was searched (teamPoolShare.test.ts covers chapters and fixes that travel).
      expect(await door(b, `team:${TEAM}`)).toMatch(/^the pool mirror of team core \(pulled up to operation \d+\)$/);
      expect(await door(b, 'global')).toBe("this machine's store");
      expect(await door(b)).toMatch(/^this machine's store and the pool mirror of team core/);
      const chapters = b.services.chapters.search({ query: 'anything' }) as { door: string; note: string };
      expect(chapters.door).toMatch(/^this machine's store and the pool mirror of team core/);
      expect(chapters.note).toMatch(/^answered by this machine's store and the pool mirror of team core/);
      expect(b.services.errors.history({ query: 'anything' })).toMatchObject({ door: expect.stringMatching(/^this machine's store and the pool mirror of team core/) });
      for (const m of [a, b]) {
        expect(teamFacts(m).map((f) => f.id)).toEqual(teamFacts(a).map((f) => f.id));
        expect(teamFacts(m)).toHaveLength(35);
        expect(count(m, "SELECT count(*) FROM notes WHERE scope = 'team:core'")).toBe(36);
        // A team's day logs have a vault folder of their own, as a project's do.
        expect(count(m, "SELECT count(*) FROM notes WHERE scope = 'team:core' AND path NOT LIKE 'teams/core/daily/%'")).toBe(0);
      }
      expect(count(b, "SELECT count(*) FROM facts WHERE scope = 'global'")).toBe(0);
      expect(count(b, "SELECT count(*) FROM notes WHERE text LIKE 'a team note%'")).toBe(1);
      // Syncing again moves nothing: the pool has each operation once, each store applied it once.
      expect(await a.pool.sync()).toEqual({ pushed: 0, pulled: 0 });
      const admin = await pg.admin();
      try {
        const rows = await admin.query("SELECT count(*)::int AS n, count(DISTINCT op_id)::int AS d FROM recollect.ops WHERE team = 'core'");
        expect(rows.rows[0]).toEqual({ n: 36, d: 36 });
      } finally {
        await admin.end();
      }
    } finally {
      await closeMachines(a, b);
    }
  }, 60_000);

  it('the same fact written on two machines at once ends with the same current value and both values in history everywhere', async () => {
    // Both clocks read the same millisecond: the tie is settled by id, the same way on each machine.
    const at = Date.UTC(2026, 5, 1, 12);
    const [a, b] = [await machine('alice', undefined, () => at), await machine('bob', undefined, () => at)];
    try {
      const fact = (m: Machine, object: string) => m.services.memory.remember({ subject: 'release train', predicate: 'ships on', object, statement: `release train ships on ${object}`, scope: `team:${TEAM}` }, m.user);
      await Promise.all([fact(a, 'Tuesday'), fact(b, 'Thursday')]);
      for (const m of [a, b, a]) await m.pool.sync();
      const ledger = (m: Machine) => queryRows(m.services.store.db, "SELECT id, object, superseded_by, superseded_at IS NULL AS current FROM facts WHERE subject = 'release train' ORDER BY id");
      expect(ledger(a)).toHaveLength(2);
      expect(ledger(b)).toEqual(ledger(a));
      const current = ledger(a).filter((r) => Number(r.current) === 1);
      expect(current).toHaveLength(1);
      // The later by (time, id) is current: here the larger id.
      expect(current[0]?.id).toBe(String(ledger(a)[1]?.id));
      const retrieved = (m: Machine) => m.services.memory.retrieve({ subject: 'release train', include_history: true, scope: `team:${TEAM}` });
      expect(retrieved(b)).toEqual(retrieved(a));
    } finally {
      await closeMachines(a, b);
    }
  }, 60_000);

  it('five live stores converge while all write at once: every write everywhere, none twice', async () => {
    const ms = await Promise.all(MEMBERS.map((u) => machine(u)));
    try {
      for (const m of ms) m.pool.start();
      await Promise.all(ms.map(async (m) => {
        for (let i = 0; i < 12; i++) await write(m, `five-${m.user}`, i);
      }));
      const total = 12 * ms.length;
      await waitUntil('every store to hold every write', () => ms.every((m) => count(m, "SELECT count(*) FROM facts WHERE subject LIKE 'five-%'") === total), 30_000);
      const ids = teamFacts(ms[0] as Machine).filter((f) => f.id).map((f) => f.id);
      for (const m of ms) {
        expect(teamFacts(m).map((f) => f.id)).toEqual(ids);
        expect(count(m, "SELECT count(DISTINCT id) FROM facts WHERE subject LIKE 'five-%'")).toBe(total);
        expect(count(m, "SELECT count(*) FROM notes WHERE text LIKE 'five-%'")).toBe(total);
      }
    } finally {
      await closeMachines(...ms);
    }
  }, 90_000);

  it('a member of another team and a wrong password read nothing, with a clear refusal', async () => {
    const home = tempHome('pool-mallory');
    const joined = await joinPool({ url: pg.url('mallory'), team: TEAM, password: password('mallory') }, new PoolStateFile(home));
    expect(isRefusal(joined) && joined.reason).toMatch(/not a member of team "core"/);
    const wrong = await joinPool({ url: pg.url('alice'), team: TEAM, password: 'not-her-password' }, new PoolStateFile(home));
    expect(isRefusal(wrong) && wrong.reason).toMatch(/refused the password for user "alice"/);
    const fromSettings = resolvePool({}, { url: `postgres://alice:${password('alice')}@127.0.0.1:${pg.port}/postgres`, team: TEAM }, new PoolStateFile(home));
    expect(isRefusal(fromSettings) && fromSettings.reason).toMatch(/recollect.pool.url carries a password/);
    const inUrl = await joinPool({ url: `postgres://alice:${password('alice')}@127.0.0.1:${pg.port}/postgres`, team: TEAM }, new PoolStateFile(home));
    expect(isRefusal(inUrl) && inUrl.reason).toMatch(/carries a password/);

    const m = await machine('mallory', home);
    try {
      const r = await m.pool.sync();
      expect(isRefusal(r) && r.reason).toMatch(/not a member of team "core"/);
      expect(m.pool.current.state).toBe('refused');
      expect(count(m, 'SELECT count(*) FROM pool_applied')).toBe(0);
    } finally {
      await closeMachines(m);
    }
    // Straight at the table, row-level security shows mallory none of the team's rows.
    const direct = new Client({ connectionString: `postgres://mallory:${password('mallory')}@127.0.0.1:${pg.port}/postgres` });
    await direct.connect();
    try {
      expect((await direct.query("SELECT count(*)::int AS n FROM recollect.ops WHERE team = 'core'")).rows[0]).toEqual({ n: 0 });
      await expect(direct.query("INSERT INTO recollect.ops(team, seq, op_id, origin, at, body) VALUES ('core', 999999, 'x', 'x', 0, '{}')")).rejects.toThrow(/row-level security/);
    } finally {
      await direct.end();
    }
  }, 60_000);

  it('the server stopped for a while and started again, with writes on both sides meanwhile: both catch up', async () => {
    const [a, b] = [await machine('carol'), await machine('dave')];
    try {
      a.pool.start();
      b.pool.start();
      await write(a, 'before-stop', 0);
      await waitUntil('the first write to reach b', () => count(b, "SELECT count(*) FROM facts WHERE subject = 'before-stop-0'") === 1);
      pg.stop();
      for (let i = 0; i < 10; i++) {
        await write(a, 'offline-a', i);
        await write(b, 'offline-b', i);
      }
      await waitUntil('both to see the server gone', () => a.pool.current.state === 'offline' && b.pool.current.state === 'offline', 15_000);
      // Offline, each store still answers from itself.
      expect(count(a, "SELECT count(*) FROM facts WHERE subject LIKE 'offline-a-%'")).toBe(10);
      expect(count(a, "SELECT count(*) FROM facts WHERE subject LIKE 'offline-b-%'")).toBe(0);
      await sleep(1500);
      pg.start();
      const both = "SELECT count(*) FROM facts WHERE subject LIKE 'offline-%'";
      await waitUntil('both to catch up after the restart', () => count(a, both) === 20 && count(b, both) === 20, 30_000);
      await waitUntil('both to report connected', () => a.pool.current.state === 'connected' && b.pool.current.state === 'connected');
      const offlineIds = (m: Machine) => queryRows(m.services.store.db, "SELECT id FROM facts WHERE subject LIKE 'offline-%' ORDER BY id").map((r) => String(r.id));
      expect(offlineIds(b)).toEqual(offlineIds(a));
      expect(count(a, "SELECT count(DISTINCT id) FROM facts WHERE subject LIKE 'offline-%'")).toBe(20);
    } finally {
      await closeMachines(a, b);
    }
  }, 90_000);

  it('kill -9 in the middle of a push and of a pull loses nothing and applies nothing twice', async () => {
    const total = 3000;
    const homeA = tempHome('pool-kill-a');
    const a = await openTemp(homeA);
    try {
      // Real fact operations, written the fast way (one fsync at the end) to have a long push.
      for (let i = 0; i < total; i++) {
        const at = Date.now();
        await a.store.commit(() => ({ op: { op: 'memory.fact.saved', at, id: `${at.toString(36).padStart(9, '0')}${i.toString(16).padStart(10, '0')}`, subject: `kill-${i}`, predicate: 'is', object: `v${i}`, scope: `team:${TEAM}`, source: 'test', statement: null, cites: [] }, result: undefined }), { durable: i === total - 1 });
      }
    } finally {
      a.store.close();
    }
    const admin = await pg.admin();
    const onServer = async () => Number((await admin.query("SELECT count(*) AS n FROM recollect.ops WHERE body LIKE '%\"kill-%'")).rows[0].n);
    try {
      // A push killed after some batches committed and before the last.
      const push = cliChild(homeA, 'erin');
      await waitUntil('the push to be under way', async () => (await onServer()) > 0, 30_000);
      push.kill('SIGKILL');
      await exited(push);
      const partial = await onServer();
      expect(partial).toBeGreaterThan(0);
      expect(partial).toBeLessThan(total);
      expect(await cliRun(homeA, 'erin')).toBe(0);
      expect(await onServer()).toBe(total);
      const distinct = await admin.query("SELECT count(DISTINCT op_id)::int AS d, count(DISTINCT body)::int AS b FROM recollect.ops WHERE body LIKE '%\"kill-%'");
      expect(distinct.rows[0]).toEqual({ d: total, b: total });

      // A pull killed after some batches were journaled here.
      const homeB = tempHome('pool-kill-b');
      const pull = cliChild(homeB, 'bob');
      const journal = path.join(homeB, 'journal.jsonl');
      // Two batches seen: the kill may tear the line being written (it is then skipped), never the one before.
      await waitUntil('the pull to be under way', async () => fs.existsSync(journal) && fs.readFileSync(journal, 'utf8').split('"op":"pool.pulled"').length > 2, 30_000);
      pull.kill('SIGKILL');
      await exited(pull);
      const halfway = await openTemp(homeB);
      try {
        // Earlier tests' team writes come first in the pool's order, so what was pulled is counted whole.
        const pulled = Number(queryScalar(halfway.store.db, 'SELECT count(*) FROM pool_applied'));
        const onPool = Number((await admin.query("SELECT count(*) AS n FROM recollect.ops WHERE team = 'core'")).rows[0].n);
        expect(pulled).toBeGreaterThan(0);
        expect(pulled).toBeLessThan(onPool);
      } finally {
        halfway.store.close();
      }
      expect(await cliRun(homeB, 'bob')).toBe(0);
      const b = await openTemp(homeB);
      try {
        const db = b.store.db;
        expect(Number(queryScalar(db, "SELECT count(*) FROM facts WHERE subject LIKE 'kill-%'"))).toBe(total);
        expect(Number(queryScalar(db, "SELECT count(DISTINCT id) FROM facts WHERE subject LIKE 'kill-%'"))).toBe(total);
        expect(Number(queryScalar(db, 'SELECT count(*) FROM pool_applied'))).toBe(Number(queryScalar(db, 'SELECT count(DISTINCT op_id) FROM pool_applied')));
      } finally {
        b.store.close();
      }
    } finally {
      await admin.end();
    }
  }, 90_000);
});

function cliEnv(home: string, user: string): NodeJS.ProcessEnv {
  return { ...process.env, RECOLLECT_HOME: home, RECOLLECT_POOL_URL: pg.url(user), RECOLLECT_POOL_TEAM: TEAM, PGPASSWORD: password(user) };
}

function cliChild(home: string, user: string) {
  return spawn(process.execPath, [CLI, 'pool', 'sync', '--batch', '25'], { env: cliEnv(home, user), stdio: ['ignore', 'ignore', 'inherit'] });
}

async function cliRun(home: string, user: string): Promise<number | null> {
  return exited(spawn(process.execPath, [CLI, 'pool', 'sync'], { env: cliEnv(home, user), stdio: ['ignore', 'ignore', 'inherit'] }));
}

