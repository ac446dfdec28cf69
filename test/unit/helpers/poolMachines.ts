import type { spawn } from 'node:child_process';
import { PoolClient, type PoolClientOptions } from '../../../src/core/pool/poolClient';
import { PoolStateFile } from '../../../src/core/pool/poolState';
import type { Services } from '../../../src/core/services';
import { memberPassword, type PostgresServer } from './postgres';
import { openTemp } from './tempStore';

/** One "machine" of a team: its own store home, opened for real, and its pool client. */
export interface Machine {
  user: string;
  home: string;
  services: Services;
  pool: PoolClient;
}

export async function poolMachine(pg: PostgresServer, team: string, user: string, home: string, opts: { now?: () => number; client?: PoolClientOptions } = {}): Promise<Machine> {
  const services = await openTemp(home, opts.now);
  const pool = new PoolClient(services.store, { url: pg.url(user), team, password: memberPassword(user) }, new PoolStateFile(home), opts.client);
  return { user, home, services, pool };
}

export async function closeMachines(...ms: Machine[]): Promise<void> {
  for (const m of ms) {
    await m.pool.stop();
    m.services.store.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `test` until it holds, or fails naming `what` after `ms`. */
export async function waitUntil(what: string, test: () => boolean | Promise<boolean>, ms = 20_000, everyMs = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function exited(child: ReturnType<typeof spawn>): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}
