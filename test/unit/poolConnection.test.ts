import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PoolClient, type PoolStatus, type PoolTarget } from '../../src/core/pool/poolClient';
import { PoolStateFile } from '../../src/core/pool/poolState';
import { isRefusal } from '../../src/core/refusal';
import type { Services } from '../../src/core/services';
import { queryScalar } from '../../src/core/store/sqlite';
import { poolBadge } from '../../src/host/poolBadge';
import { makeCertificates, type TestCertificates } from './helpers/certificates';
import { memberPassword, startPoolPostgres, type PostgresServer } from './helpers/postgres';
import { openTemp, tempHome } from './helpers/tempStore';
import { waitUntil } from './helpers/poolMachines';

/**
 * How a machine reaches the pool: TLS when the URL asks for it (against a server with ssl=on and
 * certificates openssl made here), the password from PGPASSWORD or ~/.pgpass, and the states the
 * status bar shows, read from a real client on a real server.
 */

const TEAM = 'core';
const password = memberPassword;

let pg: PostgresServer;
let certs: TestCertificates;

beforeAll(async () => {
  certs = makeCertificates(tempHome('pool-certs'));
  // The administrator connects without TLS; members only through it, so a member's connection
  // that gets in at all went over TLS.
  pg = await startPoolPostgres([{ team: TEAM, members: ['alice', 'bob', 'carol'] }], {
    tls: { cert: certs.serverCert, key: certs.serverKey },
    hba: ['local all all trust', 'host all postgres 127.0.0.1/32 scram-sha-256', 'hostssl all all 127.0.0.1/32 scram-sha-256'],
  });
}, 60_000);

afterAll(() => pg?.remove());

/** The environment variables these tests set, restored after each. */
const ENV = ['PGPASSWORD', 'PGSSLROOTCERT', 'PGPASSFILE', 'HOME'] as const;
const savedEnv = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
afterEach(() => {
  for (const k of ENV) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

interface Machine {
  services: Services;
  pool: PoolClient;
  statuses: PoolStatus[];
}

const open: Machine[] = [];
afterEach(async () => {
  for (const m of open.splice(0)) {
    await m.pool.stop();
    m.services.store.close();
  }
});

async function machine(target: Omit<PoolTarget, 'team'>, options: { batchSize?: number } = {}): Promise<Machine> {
  const home = tempHome('pool-conn');
  const services = await openTemp(home);
  const statuses: PoolStatus[] = [];
  const pool = new PoolClient(services.store, { ...target, team: TEAM }, new PoolStateFile(home), { pollMs: 50, maxRetryMs: 300, onStatus: (s) => statuses.push(s), ...options });
  const m = { services, pool, statuses };
  open.push(m);
  return m;
}

function tlsUrl(user: string, query: string): string {
  return `${pg.url(user)}?${query}`;
}

async function sslOfConnections(user: string): Promise<boolean[]> {
  const admin = await pg.admin();
  try {
    const r = await admin.query('SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid WHERE a.usename = $1', [user]);
    return r.rows.map((row: { ssl: boolean }) => row.ssl);
  } finally {
    await admin.end();
  }
}

describe('TLS, when the URL asks for it', () => {
  it('a URL without sslmode does not use TLS: this server, which takes members only over TLS, refuses it', async () => {
    const m = await machine({ url: pg.url('alice'), password: password('alice') });
    const r = await m.pool.connect();
    expect(isRefusal(r)).toBe(true);
    expect(m.pool.current.state).toBe('refused');
    expect(isRefusal(r) && r.reason).toMatch(/does not let this connection in for user "alice".*no encryption/);
  });

  it('sslmode=verify-full with a wrong CA, or with none given, is refused with the reason and what to do', async () => {
    const wrong = await machine({ url: tlsUrl('alice', `sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.wrongCa)}`), password: password('alice') });
    const r = await wrong.pool.connect();
    expect(isRefusal(r) && r.reason).toMatch(/the pool server's TLS certificate could not be verified/);
    expect(isRefusal(r) && r.reason).toMatch(/sslrootcert=.*PGSSLROOTCERT/);
    expect(wrong.pool.current.state).toBe('refused');
    // No CA at all: the system's authorities do not know this self-made one.
    const none = await machine({ url: tlsUrl('alice', 'sslmode=verify-full'), password: password('alice') });
    const n = await none.pool.connect();
    expect(isRefusal(n) && n.reason).toMatch(/the pool server's TLS certificate could not be verified/);
    expect(await sslOfConnections('alice')).toEqual([]);
  });

  it('with the right CA, in the URL (sslrootcert) or in PGSSLROOTCERT, it connects over TLS and syncs', async () => {
    const a = await machine({ url: tlsUrl('alice', `sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.ca)}`), password: password('alice') });
    process.env.PGSSLROOTCERT = certs.ca;
    const b = await machine({ url: tlsUrl('bob', 'sslmode=verify-full'), password: password('bob') });
    await a.services.memory.remember({ subject: 'tls-check', predicate: 'is', object: 'encrypted', statement: 'the pool talks TLS', scope: `team:${TEAM}` }, 'alice');
    expect(await a.pool.sync()).toEqual({ pushed: 1, pulled: 0 });
    expect(await b.pool.sync()).toEqual({ pushed: 0, pulled: 1 });
    expect(queryScalar(b.services.store.db, "SELECT object FROM facts WHERE subject = 'tls-check'")).toBe('encrypted');
    expect(await sslOfConnections('alice')).toEqual([true]);
    expect(await sslOfConnections('bob')).toEqual([true]);
  });
});

describe('the password, never from the URL', () => {
  const url = () => tlsUrl('carol', `sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.ca)}`);

  it('comes from PGPASSWORD; a wrong one is refused', async () => {
    delete process.env.PGPASSFILE;
    process.env.HOME = tempHome('pool-home-empty');
    process.env.PGPASSWORD = password('carol');
    const m = await machine({ url: url() });
    expect(await m.pool.connect()).toBe(true);
    process.env.PGPASSWORD = 'not-carols';
    const wrong = await machine({ url: url() });
    const r = await wrong.pool.connect();
    expect(isRefusal(r) && r.reason).toMatch(/refused the password for user "carol"/);
  });

  it('comes from ~/.pgpass (mode 0600); without one, the refusal says where a password can come from', async () => {
    delete process.env.PGPASSWORD;
    delete process.env.PGPASSFILE;
    const home = tempHome('pool-home');
    process.env.HOME = home;
    const none = await machine({ url: url() });
    const r = await none.pool.connect();
    expect(isRefusal(r) && r.reason).toMatch(/no password for user "carol".*PGPASSWORD.*~\/\.pgpass/);
    const file = path.join(home, '.pgpass');
    // Others may read it: ignored, as libpq ignores it.
    fs.writeFileSync(file, `# host:port:database:user:password\n127.0.0.1:${pg.port}:postgres:carol:${password('carol')}\n`, { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    const open = await machine({ url: url() });
    expect(isRefusal(await open.pool.connect())).toBe(true);
    fs.chmodSync(file, 0o600);
    const m = await machine({ url: url() });
    expect(await m.pool.connect()).toBe(true);
  });
});

describe('the status bar, from the real state of a live client', () => {
  it('connected, then offline while the server is stopped, then connected again; behind by N while a backlog is pulled', async () => {
    const ca = `sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.ca)}`;
    const writer = await machine({ url: tlsUrl('alice', ca), password: password('alice') });
    const reader = await machine({ url: tlsUrl('bob', ca), password: password('bob') }, { batchSize: 5 });
    reader.pool.start();
    await waitUntil('the reader connected', () => reader.pool.current.state === 'connected');
    expect(poolBadge(reader.pool.current).text).toBe(`$(cloud) ${TEAM}`);

    pg.stop();
    await waitUntil('the reader offline', () => reader.pool.current.state === 'offline');
    expect(poolBadge(reader.pool.current).text).toBe(`$(cloud-offline) ${TEAM}: offline`);
    expect(poolBadge(reader.pool.current).tooltip).toMatch(/out of reach/);

    pg.start();
    await waitUntil('the reader back', () => reader.pool.current.state === 'connected', 30_000);
    await reader.pool.stop();

    // 23 operations the reader has not pulled: in batches of 5 it is behind by 23, 18, … 3, then level.
    for (let i = 0; i < 23; i++) await writer.services.memory.remember({ subject: `backlog-${i}`, predicate: 'is', object: `v${i}`, statement: `backlog ${i}`, scope: `team:${TEAM}` }, 'alice');
    expect(await writer.pool.sync()).toMatchObject({ pushed: 23 });
    reader.statuses.length = 0;
    expect(await reader.pool.sync()).toMatchObject({ pulled: 23 });
    const behind = reader.statuses.filter((s) => s.state === 'behind').map((s) => s.behind);
    expect(behind).toEqual([23, 18, 13, 8, 3]);
    expect(poolBadge(reader.statuses.find((s) => s.state === 'behind') as PoolStatus).text).toBe(`$(cloud-download) ${TEAM}: behind by 23`);
    expect(reader.pool.current).toMatchObject({ state: 'connected', behind: 0 });
  }, 60_000);
});
