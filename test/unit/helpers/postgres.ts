import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { setupPoolServer } from '../../../src/core/pool/poolServer';

const BIN = '/usr/lib/postgresql/15/bin';
const ADMIN_PASSWORD = 'admin-secret';

/** A real PostgreSQL 15 server in a temp folder, on a loopback port, for one test file. */
export interface PostgresServer {
  port: number;
  /** The server's data folder (postmaster.pid names its main process). */
  data: string;
  /** postgres://user@127.0.0.1:port/postgres (no password: give it through PGPASSWORD or the client). */
  url(user: string): string;
  admin(): Promise<Client>;
  stop(): void;
  start(): void;
  remove(): void;
}

export function postgresAvailable(): boolean {
  return fs.existsSync(path.join(BIN, 'initdb'));
}

/** Root may not run PostgreSQL: the server runs as the `postgres` user when we are root. */
function asServerUser(cmd: string, args: string[]): string {
  const asRoot = process.getuid?.() === 0;
  return execFileSync(asRoot ? 'runuser' : cmd, asRoot ? ['-u', 'postgres', '--', cmd, ...args] : args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface PostgresOptions {
  /** The server's own fsync on (the bench measures with it; tests do not need it). */
  durable?: boolean;
  /** TLS on (ssl=on) with this certificate and key (copied into the server's folder, readable by the server only). */
  tls?: { cert: string; key: string };
  /** pg_hba.conf's lines instead of initdb's (local trust, host scram-sha-256). */
  hba?: string[];
}

export async function startPostgres(opts: PostgresOptions = {}): Promise<PostgresServer> {
  if (!postgresAvailable()) throw new Error(`PostgreSQL 15 is missing (${BIN}/initdb): apt-get install postgresql (scripts/test.sh does it)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-pg-'));
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  fs.writeFileSync(pwfile, ADMIN_PASSWORD);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    fs.chownSync(dir, uid, gid);
    fs.chownSync(pwfile, uid, gid);
  }
  asServerUser(path.join(BIN, 'initdb'), ['-D', data, '-U', 'postgres', '--pwfile', pwfile, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const owner = (file: string) => {
    if (process.getuid?.() !== 0) return;
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    fs.chownSync(file, uid, gid);
  };
  let tls = '';
  if (opts.tls) {
    // PostgreSQL refuses a key file that others may read.
    const cert = path.join(dir, 'server.crt');
    const key = path.join(dir, 'server.key');
    fs.copyFileSync(opts.tls.cert, cert);
    fs.copyFileSync(opts.tls.key, key);
    fs.chmodSync(key, 0o600);
    owner(cert);
    owner(key);
    tls = ` -c ssl=on -c ssl_cert_file=${cert} -c ssl_key_file=${key}`;
  }
  if (opts.hba) {
    const hba = path.join(data, 'pg_hba.conf');
    fs.writeFileSync(hba, opts.hba.join('\n') + '\n');
    owner(hba);
  }
  const port = await freePort();
  const log = path.join(dir, 'server.log');
  // fsync off: the server's own durability is not what these tests are about, and it is slow on a shared disk.
  const fast = opts.durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off';
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c max_connections=60${fast}${tls}`;
  const start = () => asServerUser(path.join(BIN, 'pg_ctl'), ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', 'start']);
  const stop = () => {
    try {
      asServerUser(path.join(BIN, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    } catch {
      // Already stopped.
    }
  };
  start();
  return {
    port,
    data,
    url: (user) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/postgres`,
    admin: async () => {
      const c = new Client({ host: '127.0.0.1', port, user: 'postgres', password: ADMIN_PASSWORD, database: 'postgres' });
      await c.connect();
      return c;
    },
    start,
    stop,
    remove: () => {
      stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A started server with the pool's schema and these teams, each member's password `pw-<user>`. */
export async function startPoolPostgres(teams: readonly { team: string; members: readonly string[] }[], opts: PostgresOptions = {}): Promise<PostgresServer> {
  const pg = await startPostgres(opts);
  const admin = await pg.admin();
  try {
    await setupPoolServer(admin, teams.map((t) => ({ team: t.team, members: t.members.map((user) => ({ user, password: memberPassword(user) })) })));
  } finally {
    await admin.end();
  }
  return pg;
}

export const memberPassword = (user: string): string => `pw-${user}`;
