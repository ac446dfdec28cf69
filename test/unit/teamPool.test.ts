import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolClient } from '../../src/core/pool/poolClient';
import { setupPoolServer } from '../../src/core/pool/poolServer';
import { PoolStateFile } from '../../src/core/pool/poolState';
import { joinPool } from '../../src/core/pool/poolJoin';
import { isRefusal } from '../../src/core/refusal';
import type { Services } from '../../src/core/services';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { CLI } from './helpers/mcpClient';
import { startPostgres, type PostgresServer } from './helpers/postgres';
import { openTemp, tempHome } from './helpers/tempStore';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TEAM = 'core';
const MEMBERS = ['alice', 'bob', 'carol', 'dave', 'erin'];
const password = (user: string) => `pw-${user}`;

let pg: PostgresServer;

beforeAll(async () => {
  pg = await startPostgres();
  const admin = await pg.admin();
  try {
    await setupPoolServer(admin, [
      { team: TEAM, members: MEMBERS.map((user) => ({ user, password: password(user) })) },
      { team: 'other', members: [{ user: 'mallory', password: password('mallory') }] },
    ]);
  } finally {
    await admin.end();
  }
}, 60_000);

afterAll(() => pg?.remove());

interface Machine {
  user: string;
  home: string;
  services: Services;
  pool: PoolClient;
}

async function machine(user: string, home = tempHome(`pool-${user}`)): Promise<Machine> {
  const services = await openTemp(home);
  const state = new PoolStateFile(home);
  const pool = new PoolClient(services.store, { url: pg.url(user), team: TEAM, password: password(user) }, state, { pollMs: 50, maxRetryMs: 500 });
  return { user, home, services, pool };
}

async function close(...ms: Machine[]): Promise<void> {
  for (const m of ms) {
    await m.pool.stop();
    m.services.store.close();
  }
}

function teamFacts(m: Machine): { id: string; object: string; current: boolean }[] {
  return queryRows(m.services.store.db, "SELECT id, object, superseded_at IS NULL AS current FROM facts WHERE scope LIKE 'team:%' ORDER BY id").map((r) => ({ id: String(r.id), object: String(r.object), current: Number(r.current) === 1 }));
}

function count(m: Machine, sql: string): number {
  return Number(queryScalar(m.services.store.db, sql));
}

async function until(what: string, test: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
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
      for (const m of [a, b, a, b]) { const r = await m.pool.sync(); expect(r).toMatchObject({ pushed: expect.any(Number) }); }
      for (const m of [a, b]) {
        expect(teamFacts(m).map((f) => f.id)).toEqual(teamFacts(a).map((f) => f.id));
        expect(teamFacts(m)).toHaveLength(35);
        expect(count(m, "SELECT count(*) FROM notes WHERE scope = 'team:core'")).toBe(36);
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
      await close(a, b);
    }
  }, 60_000);
});
