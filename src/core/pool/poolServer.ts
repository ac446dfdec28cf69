import type { ClientBase } from 'pg';
import { POOL_BLOB_MAX } from './poolBlobs';
import { teamNameProblem } from './teamScope';

/**
 * The pool's tables on the PostgreSQL server, and what an administrator runs to create a team
 * and its members (docs/team-pool.md prints the same statements).
 *
 * One table of operations for every team, with row-level security: a row is visible and
 * writable only to members of its team's role (`recollect_team_<name>`). Each team's row in
 * `recollect.teams` holds its sequence; a push locks that row, so a team's operations are
 * numbered in commit order and a reader that asks for "after seq N" never misses one that
 * committed late. Operation ids are unique per team, so a repeated push changes nothing.
 * The blobs that team chapters and plans name are kept beside, once per team and address.
 */
export const POOL_SCHEMA_SQL = `
CREATE SCHEMA IF NOT EXISTS recollect;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'recollect_member') THEN CREATE ROLE recollect_member NOLOGIN; END IF;
END $$;
CREATE TABLE IF NOT EXISTS recollect.teams (
  team text PRIMARY KEY,
  last_seq bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS recollect.ops (
  team text NOT NULL REFERENCES recollect.teams(team),
  seq bigint NOT NULL,
  op_id text NOT NULL,
  origin text NOT NULL,
  at bigint NOT NULL,
  body text NOT NULL,
  pushed_by name NOT NULL DEFAULT current_user,
  pushed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team, seq),
  UNIQUE (team, op_id)
);
CREATE TABLE IF NOT EXISTS recollect.blobs (
  team text NOT NULL REFERENCES recollect.teams(team),
  sha256 text NOT NULL,
  bytes bytea NOT NULL CHECK (octet_length(bytes) <= ${POOL_BLOB_MAX}),
  pushed_by name NOT NULL DEFAULT current_user,
  PRIMARY KEY (team, sha256)
);
ALTER TABLE recollect.teams ENABLE ROW LEVEL SECURITY;
ALTER TABLE recollect.ops ENABLE ROW LEVEL SECURITY;
ALTER TABLE recollect.blobs ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS team_members ON recollect.teams;
CREATE POLICY team_members ON recollect.teams USING (pg_has_role(current_user, 'recollect_team_' || team, 'MEMBER'));
DROP POLICY IF EXISTS team_members ON recollect.ops;
CREATE POLICY team_members ON recollect.ops
  USING (pg_has_role(current_user, 'recollect_team_' || team, 'MEMBER'))
  WITH CHECK (pg_has_role(current_user, 'recollect_team_' || team, 'MEMBER') AND pushed_by = current_user);
DROP POLICY IF EXISTS team_members ON recollect.blobs;
CREATE POLICY team_members ON recollect.blobs
  USING (pg_has_role(current_user, 'recollect_team_' || team, 'MEMBER'))
  WITH CHECK (pg_has_role(current_user, 'recollect_team_' || team, 'MEMBER') AND pushed_by = current_user);
GRANT USAGE ON SCHEMA recollect TO recollect_member;
GRANT SELECT, INSERT ON recollect.ops TO recollect_member;
GRANT SELECT, INSERT ON recollect.blobs TO recollect_member;
GRANT SELECT, UPDATE (last_seq) ON recollect.teams TO recollect_member;
`;

/** The role whose members make up a team. */
export function teamRole(team: string): string {
  return `recollect_team_${team}`;
}

/** PostgreSQL truncates identifiers at 63 bytes; the role name must stay whole. */
const TEAM_MAX = 48;

export function poolTeamProblem(team: string): string | undefined {
  return teamNameProblem(team) ?? (team.length > TEAM_MAX ? `team name "${team}" is longer than ${TEAM_MAX} characters (its role name must fit PostgreSQL's 63)` : undefined);
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The statements that create a team: its role (a member of recollect_member) and its sequence row. */
export function addTeamSql(team: string): string {
  const bad = poolTeamProblem(team);
  if (bad) throw new Error(bad);
  const role = teamRole(team);
  return `DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${literal(role)}) THEN CREATE ROLE ${ident(role)} NOLOGIN IN ROLE recollect_member; END IF;
END $$;
INSERT INTO recollect.teams(team) VALUES (${literal(team)}) ON CONFLICT DO NOTHING;`;
}

/** The statements that make `user` (a login role, created when missing) a member of `team`. */
export function addMemberSql(team: string, user: string, password?: string): string {
  const bad = poolTeamProblem(team);
  if (bad) throw new Error(bad);
  const pw = password === undefined ? '' : ` PASSWORD ${literal(password)}`;
  return `DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = ${literal(user)}) THEN CREATE ROLE ${ident(user)} LOGIN${pw}; END IF;
END $$;
GRANT ${ident(teamRole(team))} TO ${ident(user)};`;
}

/** What the tests and `recollect pool setup` run as an administrator. */
export async function setupPoolServer(admin: ClientBase, teams: readonly { team: string; members: readonly { user: string; password?: string }[] }[] = []): Promise<void> {
  await admin.query(POOL_SCHEMA_SQL);
  for (const t of teams) {
    await admin.query(addTeamSql(t.team));
    for (const m of t.members) await admin.query(addMemberSql(t.team, m.user, m.password));
  }
}
