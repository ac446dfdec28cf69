/**
 * What a failure talking to the pool means for a person: a refusal they must act on (a wrong
 * password, not a member of the team) or the server being out of reach (the machine keeps
 * working on its own store and catches up later).
 */
export type PoolProblem = { kind: 'refused'; reason: string } | { kind: 'offline'; reason: string };

const OFFLINE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN', '57P01', '57P02', '57P03', '08006', '08001', '08003', '08004']);

/** Node's codes for a server certificate it could not verify (a self-made or unknown CA, an expired one, another host's). */
const CERTIFICATE_CODE = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/;

export function poolProblem(err: unknown, user: string | undefined): PoolProblem {
  const e = err as { code?: string; message?: string };
  const message = e?.message ?? String(err);
  const who = user ? ` for user "${user}"` : '';
  switch (e?.code) {
    case '28P01':
      return { kind: 'refused', reason: `the pool server refused the password${who}: check PGPASSWORD, ~/.pgpass or the password saved by "Recollect: Join Team Pool…"` };
    case '28000':
      return { kind: 'refused', reason: `the pool server does not let this connection in${who} (${message}): ask the pool's administrator for access` };
    case '3D000':
      return { kind: 'refused', reason: `the pool's database does not exist on the server (${message}): check the database name in the URL` };
    case '42501':
    case '3F000':
    case '42P01':
      return { kind: 'refused', reason: `the pool server has no Recollect pool this user may read (${message}): the administrator runs the set-up in docs/team-pool.md and grants the team's role` };
  }
  if (e?.code && CERTIFICATE_CODE.test(e.code)) {
    return { kind: 'refused', reason: `the pool server's TLS certificate could not be verified (${message}): give the CA that signed it as sslrootcert=<file> in the URL or in PGSSLROOTCERT; sslmode=verify-full also checks that the certificate names the host in the URL` };
  }
  // pg asks for the password only when the server does, and finds none in PGPASSWORD or ~/.pgpass.
  if (/client password must be a string/.test(message)) {
    return { kind: 'refused', reason: `no password${who} was found: give it through PGPASSWORD, ~/.pgpass (mode 0600, lines host:port:database:user:password) or "Recollect: Join Team Pool…"` };
  }
  if (e?.code && OFFLINE_CODES.has(e.code)) return { kind: 'offline', reason: `the pool server is out of reach (${message})` };
  if (/terminat|Connection terminated|timeout|closed/i.test(message)) return { kind: 'offline', reason: `the pool server is out of reach (${message})` };
  if (/SSL|TLS|certificate/i.test(message)) return { kind: 'refused', reason: `the TLS connection to the pool failed (${message}): check sslmode in the URL and the server's certificate` };
  return { kind: 'offline', reason: `talking to the pool failed (${message})` };
}
