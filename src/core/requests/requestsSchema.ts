import type { Operation } from '../store/journal';
import type { StoreModule } from '../store/schema';
import type { Database } from '../store/sqlite';

/**
 * A named connection made its first call (or connected), or called under a changed spelling of
 * its name. Journaled only then, so `first_seen_at` is exact and `last_seen_at` moves only with
 * the connection's journaled lines (this one, its whats_new mark).
 */
export interface ConnectionSeen extends Operation {
  op: 'requests.connection.seen';
  key: string;
  name: string;
}

export interface RequestAsked extends Operation {
  op: 'requests.asked';
  id: string;
  from: string;
  fromKey: string;
  to: string;
  toKey: string;
  text: string;
  scope: string;
}

/** The addressee's answer; a later one replaces it (the count says how many there were). */
export interface RequestAnswered extends Operation {
  op: 'requests.answered';
  id: string;
  by: string;
  answer: string;
}

export interface RequestClosed extends Operation {
  op: 'requests.closed';
  id: string;
  by: string;
}

/** Where this connection's next whats_new starts: everything recorded after `mark` is new to it. */
export interface MarkMoved extends Operation {
  op: 'requests.mark.moved';
  key: string;
  name: string;
  mark: number;
}

export type RequestStatus = 'open' | 'answered' | 'closed';

const MIGRATIONS = [
  `
  CREATE TABLE connections (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    first_seen_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    whats_new_mark INTEGER
  );
  CREATE TABLE agent_requests (
    id TEXT PRIMARY KEY,
    asker TEXT NOT NULL,
    asker_key TEXT NOT NULL,
    addressee TEXT NOT NULL,
    addressee_key TEXT NOT NULL,
    text TEXT NOT NULL,
    scope TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    answer TEXT,
    answered_at INTEGER,
    answers INTEGER NOT NULL DEFAULT 0,
    closed_at INTEGER,
    closed_by TEXT
  );
  CREATE INDEX agent_requests_to ON agent_requests(addressee_key, status, created_at);
  CREATE INDEX agent_requests_from ON agent_requests(asker_key, created_at);
  `,
];

function applyConnectionSeen(db: Database, op: Operation): void {
  const c = op as ConnectionSeen;
  db.run(
    `INSERT INTO connections(key, name, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?)
     ON CONFLICT(key) DO UPDATE SET name = excluded.name, last_seen_at = max(last_seen_at, excluded.last_seen_at)`,
    [c.key, c.name, c.at, c.at],
  );
}

function applyRequestAsked(db: Database, op: Operation): void {
  const r = op as RequestAsked;
  db.run(
    `INSERT INTO agent_requests(id, asker, asker_key, addressee, addressee_key, text, scope, status, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?)`,
    [r.id, r.from, r.fromKey, r.to, r.toKey, r.text, r.scope, r.at],
  );
}

function applyRequestAnswered(db: Database, op: Operation): void {
  const a = op as RequestAnswered;
  // The writer refuses answers to closed requests; the guard keeps a foreign journal from reopening one.
  db.run(
    `UPDATE agent_requests SET answer = ?, answered_at = ?, answers = answers + 1, status = 'answered'
     WHERE id = ? AND status != 'closed'`,
    [a.answer, a.at, a.id],
  );
}

function applyRequestClosed(db: Database, op: Operation): void {
  const c = op as RequestClosed;
  db.run(`UPDATE agent_requests SET status = 'closed', closed_at = ?, closed_by = ? WHERE id = ? AND status != 'closed'`, [c.at, c.by, c.id]);
}

function applyMarkMoved(db: Database, op: Operation): void {
  const m = op as MarkMoved;
  db.run(
    `INSERT INTO connections(key, name, first_seen_at, last_seen_at, whats_new_mark) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(key) DO UPDATE SET whats_new_mark = excluded.whats_new_mark, last_seen_at = max(last_seen_at, excluded.last_seen_at)`,
    [m.key, m.name, m.at, m.at, m.mark],
  );
}

export const requestsModule: StoreModule = {
  name: 'requests',
  migrations: MIGRATIONS,
  appliers: {
    'requests.connection.seen': applyConnectionSeen,
    'requests.asked': applyRequestAsked,
    'requests.answered': applyRequestAnswered,
    'requests.closed': applyRequestClosed,
    'requests.mark.moved': applyMarkMoved,
  },
};
