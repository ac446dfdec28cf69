import * as fs from 'node:fs';
import * as path from 'node:path';
import { PoolClient } from '../src/core/pool/poolClient';
import { setupPoolServer } from '../src/core/pool/poolServer';
import { PoolStateFile } from '../src/core/pool/poolState';
import { isRefusal } from '../src/core/refusal';
import { openServices, type Services } from '../src/core/services';
import { queryScalar } from '../src/core/store/sqlite';
import { startPostgres, type PostgresServer } from '../test/unit/helpers/postgres';
import type { BenchContext } from './context';
import { heading, median, ms, note, nowMs, percentile, progress, result } from './stats';

const TEAM = 'bench';
/** The ten-machine simulation's own team, so its stores start level instead of pulling the earlier figures' backlog. */
const SIM_TEAM = 'sim';
const MACHINES = 10;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));
const password = (i: number) => `bench-pw-${i}`;

interface Machine {
  services: Services;
  pool: PoolClient;
}

/**
 * Section 7, the team pool against a real PostgreSQL 15 (its own fsync on) started in the run's
 * temp folder: replication lag A→B, push and pull throughput, catch-up after --pool-ops
 * operations made offline (default 100,000), and ten live stores writing at once.
 */
export async function runPoolSection(ctx: BenchContext): Promise<void> {
  heading('7. team pool (PostgreSQL 15, one server, stores in this process)');
  const pg = await startPostgres({ durable: true });
  try {
    const admin = await pg.admin();
    const members = Array.from({ length: MACHINES }, (_, i) => ({ user: `m${i}`, password: password(i) }));
    await setupPoolServer(admin, [{ team: TEAM, members }, { team: SIM_TEAM, members }]);
    await admin.end();
    const open = async (i: number, live: boolean, team = TEAM): Promise<Machine> => {
      const home = path.join(ctx.tmp, `pool-${i}-${Math.random().toString(36).slice(2, 8)}`);
      fs.mkdirSync(home, { recursive: true });
      const services = await openServices({ home, wasmPath: ctx.wasm });
      const pool = new PoolClient(services.store, { url: pg.url(`m${i}`), team, password: password(i) }, new PoolStateFile(home));
      if (live) pool.start();
      return { services, pool };
    };
    const close = async (...ms: Machine[]) => {
      for (const m of ms) {
        await m.pool.stop();
        m.services.store.close();
      }
    };

    // Lag: a remember on A until B's store holds it, both live.
    const [a, b] = [await open(0, true), await open(1, true)];
    await until(() => a.pool.current.state === 'connected' && b.pool.current.state === 'connected', 10_000);
    const lags: number[] = [];
    const samples = ctx.arg('pool-lag-samples', 100);
    for (let i = 0; i < samples; i++) {
      const t0 = nowMs();
      await a.services.memory.remember({ subject: `lag-${i}`, predicate: 'is', object: `v${i}`, statement: `lag sample ${i}`, scope: `team:${TEAM}` }, 'bench');
      await until(() => Number(queryScalar(b.services.store.db, 'SELECT count(*) FROM facts WHERE subject = ?', [`lag-${i}`])) === 1, 10_000, 2);
      lags.push(nowMs() - t0);
      await sleep(20);
    }
    const p95 = percentile(lags, 95);
    result('replication lag A→B p50 / p95', `${ms(median(lags))} / ${ms(p95)}`, 'p95 ≤ 1 s', p95 <= 1000);
    ctx.verdicts.push(['pool replication lag p95 ≤ 1 s', p95 <= 1000]);
    note(`${samples} remembers on A, each timed until B's store held it (B live on LISTEN/NOTIFY; A looks at its journal every 100 ms)`);
    await close(a, b);

    // Catch-up: A made --pool-ops operations offline; it pushes them, then an offline B pulls them.
    const total = ctx.arg('pool-ops', 100_000);
    const writer = await open(2, false);
    progress(`writing ${total.toLocaleString('en-US')} team operations on an offline store`);
    await bulkTeamOps(writer.services, total);
    const tPush = nowMs();
    const pushed = await writer.pool.sync();
    const pushMs = nowMs() - tPush;
    if (isRefusal(pushed)) throw new Error(pushed.reason);
    const reader = await open(3, false);
    const tPull = nowMs();
    const pulled = await reader.pool.sync();
    const pullMs = nowMs() - tPull;
    if (isRefusal(pulled)) throw new Error(pulled.reason);
    const held = Number(queryScalar(reader.services.store.db, "SELECT count(*) FROM facts WHERE subject LIKE 'bulk-%'"));
    const pushRate = total / (pushMs / 1000);
    const pullRate = total / (pullMs / 1000);
    result(`catch-up push of ${total.toLocaleString('en-US')} offline ops`, `${ms(pushMs)}  (${Math.round(pushRate).toLocaleString('en-US')} ops/s)`, '≥ 5,000 ops/s', pushRate >= 5000);
    result(`catch-up pull of ${total.toLocaleString('en-US')} ops into a fresh store`, `${ms(pullMs)}  (${Math.round(pullRate).toLocaleString('en-US')} ops/s)`, '≥ 5,000 ops/s', pullRate >= 5000);
    ctx.verdicts.push(['pool sync throughput ≥ 5,000 ops/s (push and pull)', pushRate >= 5000 && pullRate >= 5000]);
    note(`one pass each, in batches of 2,000 (one transaction / one journal line each); the reader holds ${held.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} facts`);
    await close(writer, reader);

    await tenMachines(ctx, pg, open, close);
  } finally {
    pg.remove();
  }
}

/** Ten live stores, each writing at a steady rate: every write's arrival at the nine others, and the server's work. */
async function tenMachines(ctx: BenchContext, pg: PostgresServer, open: (i: number, live: boolean, team?: string) => Promise<Machine>, close: (...m: Machine[]) => Promise<void>): Promise<void> {
  const ms10 = await Promise.all(Array.from({ length: MACHINES }, (_, i) => open(i, true, SIM_TEAM)));
  await until(() => ms10.every((m) => m.pool.current.state === 'connected'), 20_000);
  const seconds = ctx.arg('pool-sim-seconds', 10);
  const perSecond = ctx.arg('pool-sim-rate', 5);
  const written = new Map<string, number>();
  const seen = ms10.map(() => new Map<string, number>());
  const cpu0 = serverCpuSeconds(pg);
  const stats0 = await serverStats(pg);
  const t0 = nowMs();
  let stop = false;
  const watcher = (async () => {
    const last = ms10.map(() => 0);
    for (;;) {
      for (const [i, m] of ms10.entries()) {
        const rows = m.services.store.db.exec('SELECT rowid, subject FROM facts WHERE rowid > ? AND subject LIKE \'sim-%\'', [last[i] as number])[0];
        for (const r of rows?.values ?? []) {
          last[i] = Math.max(last[i] as number, Number(r[0]));
          (seen[i] as Map<string, number>).set(String(r[1]), nowMs());
        }
      }
      // Each store holds its own writes and, once delivered, the nine others'.
      if (stop && seen.every((s) => s.size >= written.size)) break;
      if (nowMs() - t0 > (seconds + 60) * 1000) break;
      await sleep(20);
    }
  })();
  await Promise.all(ms10.map(async (m, i) => {
    for (let k = 0; k < seconds * perSecond; k++) {
      const subject = `sim-${i}-${k}`;
      written.set(subject, nowMs());
      await m.services.memory.remember({ subject, predicate: 'is', object: `v${k}`, statement: `simulated write ${k} of machine ${i}`, scope: `team:${SIM_TEAM}` }, 'bench');
      await sleep(1000 / perSecond);
    }
  }));
  stop = true;
  await watcher;
  const wall = (nowMs() - t0) / 1000;
  const lags: number[] = [];
  let missing = 0;
  for (const [i, s] of seen.entries()) {
    for (const [subject, at] of written) {
      if (subject.startsWith(`sim-${i}-`)) continue;
      const got = s.get(subject);
      if (got === undefined) missing++;
      else lags.push(got - at);
    }
  }
  const cpu = serverCpuSeconds(pg) - cpu0;
  const stats1 = await serverStats(pg);
  const p95 = percentile(lags, 95);
  result(`10 machines × ${perSecond} writes/s for ${seconds} s: lag p50 / p95`, `${ms(median(lags))} / ${ms(p95)}`, 'p95 ≤ 1 s', p95 <= 1000);
  ctx.verdicts.push(['pool 10-machine lag p95 ≤ 1 s', p95 <= 1000 && missing === 0]);
  result('  deliveries (write × other machine), missing', `${lags.length.toLocaleString('en-US')}, ${missing}`);
  result('  server CPU (all its processes)', `${cpu.toFixed(2)} s in ${wall.toFixed(1)} s (${((cpu / wall) * 100).toFixed(0)}% of a core)`);
  result('  server transactions / rows read', `${Math.round((stats1.xact - stats0.xact) / wall)}/s / ${Math.round((stats1.read - stats0.read) / wall).toLocaleString('en-US')} rows/s`);
  await close(...ms10);
}

async function serverStats(pg: PostgresServer): Promise<{ xact: number; read: number }> {
  const admin = await pg.admin();
  try {
    const r = await admin.query("SELECT xact_commit + xact_rollback AS xact, tup_returned + tup_fetched AS read FROM pg_stat_database WHERE datname = 'postgres'");
    return { xact: Number(r.rows[0].xact), read: Number(r.rows[0].read) };
  } finally {
    await admin.end();
  }
}

/** User + system CPU of the postmaster and its children, from /proc (Linux). */
function serverCpuSeconds(pg: PostgresServer): number {
  const main = Number(fs.readFileSync(path.join(pg.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(fields[1]);
      if (Number(pid) !== main && ppid !== main) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks / 100;
}

/** Real fact operations, journaled without an fsync each (one at the end), to make a large offline backlog quickly. */
async function bulkTeamOps(s: Services, total: number): Promise<void> {
  for (let i = 0; i < total; i++) {
    const at = Date.now();
    const id = at.toString(36).padStart(9, '0') + i.toString(16).padStart(10, '0');
    await s.store.commit(() => ({ op: { op: 'memory.fact.saved', at, id, subject: `bulk-${i}`, predicate: 'is', object: `value ${i}`, scope: `team:${TEAM}`, source: 'bench', statement: null, cites: [] }, result: undefined }), { durable: i === total - 1 });
  }
}

async function until(test: () => boolean, timeoutMs: number, everyMs = 10): Promise<void> {
  const end = nowMs() + timeoutMs;
  while (!test()) {
    if (nowMs() > end) throw new Error('pool bench: timed out');
    await sleep(everyMs);
  }
}
