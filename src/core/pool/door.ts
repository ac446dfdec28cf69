import { queryRows, type Database } from '../store/sqlite';
import { TEAM_PREFIX } from './teamScope';

/**
 * Which door an answer came through (the chapters spec: "the pool mirror when one is pulled,
 * otherwise this machine's own store — the answer names the door it came from"). A pulled
 * mirror lives inside this machine's store, so a read over every scope passes both.
 */
export const STORE_DOOR = "this machine's store";

/** The teams this store has pulled from, with how far (pool_cursor). */
export function pulledTeams(db: Database): { team: string; upTo: number }[] {
  return queryRows(db, 'SELECT team, pulled_seq FROM pool_cursor ORDER BY team').map((r) => ({ team: String(r.team), upTo: Number(r.pulled_seq) }));
}

function mirrorDoor(m: { team: string; upTo: number }): string {
  return `the pool mirror of team ${m.team} (pulled up to operation ${m.upTo})`;
}

/**
 * The door of a read over memory that travels through the pool (facts, notes): the mirror of the
 * team a `team:` scope names, when pulled; this machine's store for any other scope; both when
 * no scope narrows the read and a mirror is pulled.
 */
export function memoryDoor(db: Database, scope: string | undefined): string {
  const mirrors = pulledTeams(db);
  if (scope !== undefined) {
    const team = scope.startsWith(TEAM_PREFIX) ? scope.slice(TEAM_PREFIX.length) : undefined;
    const mirror = mirrors.find((m) => m.team === team);
    return mirror ? mirrorDoor(mirror) : STORE_DOOR;
  }
  return mirrors.length ? `${STORE_DOOR} and ${mirrors.map(mirrorDoor).join(' and ')}` : STORE_DOOR;
}

/**
 * The door of an answer made of records that each carry their scope (error fixes, chapters and
 * plans): the door of each record's scope, named once each; with no record, what was searched
 * (this machine's store, and every mirror pulled into it).
 */
export function recordsDoor(db: Database, scopes: readonly string[]): string {
  if (!scopes.length) return memoryDoor(db, undefined);
  const doors = [...new Set(scopes.map((s) => memoryDoor(db, s)))];
  // This machine's store first, then the mirrors by name, as memoryDoor lists them.
  return doors.sort((a, b) => (a === STORE_DOOR ? -1 : b === STORE_DOOR ? 1 : a.localeCompare(b))).join(' and ');
}
