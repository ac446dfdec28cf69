import { refuse, type Refusal } from '../refusal';
import { poolTeamProblem } from './poolServer';
import type { PoolStateFile } from './poolState';

/** What VS Code's settings say about the pool (`recollect.pool.url`, `recollect.pool.team`). */
export interface PoolSettings {
  url?: string | undefined;
  team?: string | undefined;
}

export interface ResolvedPool {
  url: string;
  team: string;
  /** Where the URL came from, for status lines. */
  from: 'RECOLLECT_POOL_URL' | 'recollect.pool.url' | 'pool.json';
}

/**
 * A pool URL must be postgres://… and, where it will be kept (settings.json, pool.json), carry
 * no password: settings files are synced, shared and shown on screen. The password comes from
 * VS Code's SecretStorage, PGPASSWORD or ~/.pgpass.
 */
export function poolUrlProblem(url: string, where: string, passwordAllowed = false): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${where} "${redactPassword(url)}" is not a URL; expected postgres://user@host:5432/database`;
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') return `${where} must start with postgres:// or postgresql:// (got ${parsed.protocol}//)`;
  if (!passwordAllowed && (parsed.password || parsed.searchParams.has('password'))) {
    return `${where} carries a password, which would be stored in plain text: remove it from the URL and give it through PGPASSWORD, ~/.pgpass or "Recollect: Join Team Pool…" (VS Code's secret storage)`;
  }
  return undefined;
}

export function redactPassword(url: string): string {
  return url.replace(/(postgres(?:ql)?:\/\/[^:/@]*):[^@/]*@/i, '$1:***@').replace(/([?&]password=)[^&]*/i, '$1***');
}

/**
 * Which pool this store syncs with: RECOLLECT_POOL_URL, else the setting, else what `join`
 * recorded; the team from RECOLLECT_POOL_TEAM, the setting or the record. Undefined when no
 * pool is configured; a refusal when one is, wrongly.
 */
export function resolvePool(env: NodeJS.ProcessEnv, settings: PoolSettings, state: PoolStateFile): ResolvedPool | Refusal | undefined {
  const recorded = state.read();
  const fromEnv = env.RECOLLECT_POOL_URL?.trim();
  const fromSettings = settings.url?.trim();
  const url = fromEnv || fromSettings || recorded.url;
  if (!url) return undefined;
  const from = fromEnv ? 'RECOLLECT_POOL_URL' : fromSettings ? 'recollect.pool.url' : 'pool.json';
  // An environment variable is the person's own shell: a password there is theirs to give.
  const bad = poolUrlProblem(url, from, from === 'RECOLLECT_POOL_URL');
  if (bad) return refuse(bad);
  const team = env.RECOLLECT_POOL_TEAM?.trim() || settings.team?.trim() || recorded.team;
  if (!team) return refuse(`no team is chosen for the pool at ${redactPassword(url)}: run "recollect pool join <url> --team <name>", or set RECOLLECT_POOL_TEAM or recollect.pool.team`);
  const teamBad = poolTeamProblem(team);
  if (teamBad) return refuse(teamBad);
  return { url, team, from };
}

/** The sslmode values that ask for TLS (libpq's; pg checks the certificate for all three unless the URL adds uselibpqcompat=true). */
const TLS_MODES = new Set(['require', 'verify-ca', 'verify-full']);

/**
 * The connection settings pg is given. pg lets a connection string's (empty) password override a
 * separate `password`, so a password from secret storage goes into the string here, in memory
 * only; without one, pg reads PGPASSWORD and then ~/.pgpass itself. sslmode in the URL (or
 * PGSSLMODE) decides TLS. The CA to check the server's certificate with is the URL's
 * sslrootcert, else PGSSLROOTCERT, as libpq has it; pg reads only the URL's, so PGSSLROOTCERT is
 * added to the string here when TLS is asked for.
 */
export function pgConnection(url: string, password: string | undefined, env: NodeJS.ProcessEnv = process.env): { connectionString: string; application_name: string; connectionTimeoutMillis: number } {
  const u = new URL(url);
  if (password !== undefined) u.password = password;
  const mode = u.searchParams.get('sslmode') ?? env.PGSSLMODE;
  const rootCert = env.PGSSLROOTCERT?.trim();
  if (mode && TLS_MODES.has(mode) && rootCert && !u.searchParams.has('sslrootcert')) u.searchParams.set('sslrootcert', rootCert);
  const changed = password !== undefined || u.searchParams.get('sslrootcert') !== new URL(url).searchParams.get('sslrootcert');
  return { connectionString: changed ? u.toString() : url, application_name: 'recollect', connectionTimeoutMillis: 5_000 };
}
