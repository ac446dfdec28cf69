import { Client } from 'pg';
import { refuse, type Refusal } from '../refusal';
import { pgConnection, poolUrlProblem, redactPassword } from './poolConfig';
import { poolProblem } from './poolRefusal';
import { poolTeamProblem } from './poolServer';
import type { PoolStateFile } from './poolState';

export interface JoinRequest {
  url: string;
  /** Optional when the user belongs to exactly one team on the server. */
  team?: string | undefined;
  password?: string | undefined;
}

/**
 * Joins a pool: checks the URL (no password in it), signs in, picks the team (the only one the
 * user belongs to, when none is named) and records URL and team in pool.json. Membership itself
 * is checked again by every connection (PoolClient.connect).
 */
export async function joinPool(req: JoinRequest, state: PoolStateFile): Promise<{ url: string; team: string } | Refusal> {
  const bad = poolUrlProblem(req.url, 'the pool URL');
  if (bad) return refuse(bad);
  if (req.team) {
    const teamBad = poolTeamProblem(req.team);
    if (teamBad) return refuse(teamBad);
  }
  const client = new Client(pgConnection(req.url, req.password));
  client.on('error', () => undefined);
  let teams: string[];
  try {
    await client.connect();
    // Row-level security shows a member only the teams they belong to.
    teams = (await client.query<{ team: string }>('SELECT team FROM recollect.teams ORDER BY team')).rows.map((r) => r.team);
  } catch (err) {
    return refuse(poolProblem(err, new URL(req.url).username || process.env.PGUSER).reason);
  } finally {
    await client.end().catch(() => undefined);
  }
  const team = req.team ?? (teams.length === 1 ? teams[0] : undefined);
  if (!team) {
    return refuse(teams.length ? `this user belongs to ${teams.length} teams on the pool (${teams.join(', ')}): name one with --team` : `this user belongs to no team on the pool at ${redactPassword(req.url)}: the administrator grants a team's role (docs/team-pool.md)`);
  }
  if (!teams.includes(team)) return refuse(`this user is not a member of team "${team}" on the pool${teams.length ? ` (member of: ${teams.join(', ')})` : ''}: the administrator grants the role recollect_team_${team}`);
  // Another pool or team: this store's journal is pushed to it from the start.
  const before = state.read();
  state.update({ url: req.url, team, ...(before.url !== req.url || before.team !== team ? { pushedOffset: 0 } : {}) });
  return { url: req.url, team };
}

export function leavePool(state: PoolStateFile): { left: string | undefined } {
  const before = state.read();
  state.update({ url: undefined, team: undefined });
  return { left: before.team };
}
