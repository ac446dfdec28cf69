import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { PoolClient } from '../src/core/pool/poolClient';
import { setupPoolServer } from '../src/core/pool/poolServer';
import { PoolStateFile } from '../src/core/pool/poolState';
import { isRefusal } from '../src/core/refusal';
import { openServices, type Services } from '../src/core/services';
import { queryScalar } from '../src/core/store/sqlite';
import { startPostgres, type PostgresServer } from '../test/unit/helpers/postgres';
import type { BenchContext } from './context';
import type { PoolMachineArgs, PoolMachineReport } from './poolMachine';
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
  heading('7. team pool (PostgreSQL 15, one server; the ten machines are ten processes)');
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
    const cpuPull = process.cpuUsage();
    const pulled = await reader.pool.sync();
    const pullMs = nowMs() - tPull;
    const pullCpu = process.cpuUsage(cpuPull);
    const pullCpuS = (pullCpu.user + pullCpu.system) / 1e6;
    if (isRefusal(pulled)) throw new Error(pulled.reason);
    const held = Number(queryScalar(reader.services.store.db, "SELECT count(*) FROM facts WHERE subject LIKE 'bulk-%'"));
    const pushRate = total / (pushMs / 1000);
    const pullRate = total / (pullMs / 1000);
    result(`catch-up push of ${total.toLocaleString('en-US')} offline ops`, `${ms(pushMs)}  (${Math.round(pushRate).toLocaleString('en-US')} ops/s)`, '≥ 5,000 ops/s', pushRate >= 5000);
    result(`catch-up pull of ${total.toLocaleString('en-US')} ops into a fresh store`, `${ms(pullMs)}  (${Math.round(pullRate).toLocaleString('en-US')} ops/s)`, '≥ 5,000 ops/s', pullRate >= 5000);
    ctx.verdicts.push(['pool sync throughput ≥ 5,000 ops/s (push and pull)', pushRate >= 5000 && pullRate >= 5000]);
    result('  the pull\'s own CPU (this process)', `${pullCpuS.toFixed(1)} s  (${Math.round(total / pullCpuS).toLocaleString('en-US')} ops per CPU-second; wall time is longer on a loaded machine)`);
    note(`one pass each, in batches of 2,000 (one transaction / one journal line each); the reader holds ${held.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} facts`);
    await close(writer, reader);

    await tenMachines(ctx, pg);
  } finally {
    pg.remove();
  }
}

/**
 * Ten machines, each a process of its own (bench/poolMachine.ts: its own store home, event loop
 * and connection) writing at a steady rate: every write's arrival at the nine others, and what
 * the one server spent meanwhile (CPU of its processes, connections, transactions).
 */
async function tenMachines(ctx: BenchContext, pg: PostgresServer): Promise<void> {
  const seconds = ctx.arg('pool-sim-seconds', 10);
  const perSecond = ctx.arg('pool-sim-rate', 5);
  const count = seconds * perSecond;
  const children = Array.from({ length: MACHINES }, (_, i) => {
    const args: PoolMachineArgs = {
      home: path.join(ctx.tmp, `pool-sim-${i}`), wasm: ctx.wasm, url: pg.url(`m${i}`), password: password(i), team: SIM_TEAM,
      index: i, machines: MACHINES, count, rate: perSecond, timeoutMs: (seconds + 60) * 1000,
    };
    const proc = spawn(process.execPath, [ctx.script, '--child', 'pool-machine', JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = readline.createInterface({ input: proc.stdout });
    const ready = new Promise<void>((resolve, reject) => {
      lines.on('line', (l) => l === 'ready' && resolve());
      proc.on('exit', (code) => reject(new Error(`pool machine ${i} exited (${code}) before it was ready`)));
    });
    const report = new Promise<PoolMachineReport>((resolve, reject) => {
      lines.on('line', (l) => l.startsWith('{') && resolve(JSON.parse(l) as PoolMachineReport));
      proc.on('exit', (code) => reject(new Error(`pool machine ${i} exited (${code}) without a report`)));
    });
    report.catch(() => undefined);
    return { proc, ready, report };
  });
  await Promise.all(children.map((c) => c.ready));
  const cpu0 = serverCpuSeconds(pg);
  const stats0 = await serverStats(pg);
  const t0 = nowMs();
  for (const c of children) c.proc.stdin.write('go\n');
  const connections: number[] = [];
  let done = false;
  const sampler = (async () => {
    while (!done) {
      connections.push((await serverStats(pg)).connections);
      await sleep(1000);
    }
  })();
  const reports = await Promise.all(children.map((c) => c.report));
  done = true;
  await sampler;
  const wall = (nowMs() - t0) / 1000;
  const cpu = serverCpuSeconds(pg) - cpu0;
  const stats1 = await serverStats(pg);
  const written = new Map<string, number>();
  for (const r of reports) for (const [subject, at] of Object.entries(r.written)) written.set(subject, at);
  const lags: number[] = [];
  let missing = 0;
  for (const r of reports) {
    for (const [subject, at] of written) {
      if (subject.startsWith(`sim-${r.index}-`)) continue;
      const got = r.arrived[subject];
      if (got === undefined) missing++;
      else lags.push(got - at);
    }
  }
  const p95 = percentile(lags, 95);
  const machineCpu = reports.reduce((sum, r) => sum + r.cpuMs, 0) / 1000;
  result(`10 machines (10 processes) × ${perSecond} writes/s for ${seconds} s: lag p50 / p95`, `${ms(median(lags))} / ${ms(p95)}`, 'p95 ≤ 1 s', p95 <= 1000);
  ctx.verdicts.push(['pool 10-machine lag p95 ≤ 1 s', p95 <= 1000 && missing === 0]);
  result('  deliveries (write × other machine), missing', `${lags.length.toLocaleString('en-US')}, ${missing}`);
  result('  server CPU (all its processes)', `${cpu.toFixed(2)} s in ${wall.toFixed(1)} s (${((cpu / wall) * 100).toFixed(0)}% of a core)`);
  result('  server connections (client backends, most seen at once)', `${Math.max(...connections)}`);
  result('  server transactions / rows read', `${Math.round((stats1.xact - stats0.xact) / wall)}/s / ${Math.round((stats1.read - stats0.read) / wall).toLocaleString('en-US')} rows/s`);
  result('  the ten machines\' CPU together', `${machineCpu.toFixed(2)} s in ${wall.toFixed(1)} s (${((machineCpu / wall) * 100).toFixed(0)}% of a core)`);
  note(`the clock of a lag is Date.now() in the writing and the receiving process (one machine, one clock); each process looks at its own store every 20 ms`);
}

async function serverStats(pg: PostgresServer): Promise<{ xact: number; read: number; connections: number }> {
  const admin = await pg.admin();
  try {
    const r = await admin.query("SELECT xact_commit + xact_rollback AS xact, tup_returned + tup_fetched AS read FROM pg_stat_database WHERE datname = 'postgres'");
    // Every client backend but this one (the administrator's look).
    const c = await admin.query("SELECT count(*)::int - 1 AS n FROM pg_stat_activity WHERE backend_type = 'client backend'");
    return { xact: Number(r.rows[0].xact), read: Number(r.rows[0].read), connections: Number(c.rows[0].n) };
  } finally {
    await admin.end();
  }
}

/** User + system CPU of the postmaster and its children, live and ended, from /proc (Linux). */
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
      // The postmaster's waited-for children: the backends of connections that have ended.
      if (Number(pid) === main) ticks += Number(fields[13]) + Number(fields[14]);
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
