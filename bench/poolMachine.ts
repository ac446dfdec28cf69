import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { PoolClient } from '../src/core/pool/poolClient';
import { PoolStateFile } from '../src/core/pool/poolState';
import { openServices } from '../src/core/services';

/**
 * One machine of the ten-machine simulation, in a process of its own (`--child pool-machine
 * <json>`): its own store home, event loop and connection. It goes live on the pool, prints
 * `ready`, waits for `go` on stdin, writes `count` team facts at `rate` per second, and watches
 * its own store for everyone's; when it holds all `machines × count` (or after `timeoutMs`) it
 * prints one JSON line with when each write was made here and when each arrived here
 * (Date.now(): the machines share one clock, so times compare across processes).
 */
export interface PoolMachineArgs {
  home: string;
  wasm: string;
  url: string;
  password: string;
  team: string;
  index: number;
  machines: number;
  count: number;
  rate: number;
  timeoutMs: number;
}

export interface PoolMachineReport {
  index: number;
  written: Record<string, number>;
  arrived: Record<string, number>;
  cpuMs: number;
  pulled: number;
  pushed: number;
}

const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

export async function poolMachineChild(args: PoolMachineArgs): Promise<void> {
  fs.mkdirSync(args.home, { recursive: true });
  const services = await openServices({ home: args.home, wasmPath: args.wasm });
  const pool = new PoolClient(services.store, { url: args.url, team: args.team, password: args.password }, new PoolStateFile(args.home));
  pool.start();
  while (pool.current.state !== 'connected') await sleep(10);
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => {
    const lines = readline.createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() === 'go') {
        lines.close();
        resolve();
      }
    });
  });
  const cpu0 = process.cpuUsage();
  const written: Record<string, number> = {};
  const arrived: Record<string, number> = {};
  const expected = args.machines * args.count;
  let last = 0;
  const t0 = Date.now();
  const watch = (async () => {
    while (Object.keys(arrived).length < expected && Date.now() - t0 < args.timeoutMs) {
      const rows = services.store.db.exec("SELECT rowid, subject FROM facts WHERE rowid > ? AND subject LIKE 'sim-%'", [last])[0];
      const now = Date.now();
      for (const r of rows?.values ?? []) {
        last = Math.max(last, Number(r[0]));
        arrived[String(r[1])] ??= now;
      }
      await sleep(20);
    }
  })();
  for (let k = 0; k < args.count; k++) {
    const subject = `sim-${args.index}-${k}`;
    written[subject] = Date.now();
    await services.memory.remember({ subject, predicate: 'is', object: `v${k}`, statement: `simulated write ${k} of machine ${args.index}`, scope: `team:${args.team}` }, 'bench');
    await sleep(1000 / args.rate);
  }
  await watch;
  const cpu = process.cpuUsage(cpu0);
  const report: PoolMachineReport = { index: args.index, written, arrived, cpuMs: (cpu.user + cpu.system) / 1000, pulled: pool.current.pulled, pushed: pool.current.pushed };
  await pool.stop();
  services.store.close();
  process.stdout.write(JSON.stringify(report) + '\n');
}
