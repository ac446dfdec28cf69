import { createFtsTableSql, indexTerms } from '../search/ftsSearch';
import type { Operation } from '../store/journal';
import type { StoreModule } from '../store/schema';
import { queryScalar, type Database } from '../store/sqlite';

export const RULES_FTS = 'rules_fts';

export type RuleScope = 'project' | 'session';
export const RULE_CATEGORIES = ['convention', 'workflow', 'testing', 'safety', 'style', 'tooling', 'other'] as const;
export type RuleCategory = (typeof RULE_CATEGORIES)[number];
export type RuleDecision = 'approved' | 'rejected';

/** A rule candidate. Write-once: its text never changes; another wording is another candidate. */
export interface RuleProposed extends Operation {
  op: 'rules.proposed';
  id: string;
  text: string;
  scope: RuleScope;
  /** The project folder (scope project) or the session id (scope session) the rule is for. */
  target: string;
  category: RuleCategory;
  rationale: string | null;
  proposedBy: string;
  /** The session the proposal was made in, when known. */
  sessionId: string | null;
  /** `team:<name>` when rule proposals are shared with that team (teamShare.ts): the proposal travels, approvals never do. */
  sharedScope?: string;
}

/** A person's decision on one machine. Only a person's click makes one; no tool journals this. */
export interface RuleDecided extends Operation {
  op: 'rules.decided';
  ruleId: string;
  machineId: string;
  decision: RuleDecision;
  approver: string;
  reason: string | null;
}

const MIGRATIONS = [
  `
  CREATE TABLE rules (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    scope TEXT NOT NULL,
    target TEXT NOT NULL,
    category TEXT NOT NULL,
    rationale TEXT,
    proposed_by TEXT NOT NULL,
    session_id TEXT,
    proposed_at INTEGER NOT NULL,
    fts_docid INTEGER
  );
  CREATE INDEX rules_by_target ON rules(scope, target);
  CREATE TABLE rule_decisions (
    id INTEGER PRIMARY KEY,
    rule_id TEXT NOT NULL,
    machine_id TEXT NOT NULL,
    decision TEXT NOT NULL,
    approver TEXT NOT NULL,
    reason TEXT,
    decided_at INTEGER NOT NULL
  );
  CREATE INDEX rule_decisions_by_rule ON rule_decisions(rule_id, machine_id, decided_at);
  ${createFtsTableSql(RULES_FTS, ['ref'])}
  `,
  // A proposal made for a team travels through the pool (its decisions on each machine do not).
  `ALTER TABLE rules ADD COLUMN shared_scope TEXT;`,
];

function applyProposed(db: Database, op: Operation): void {
  const r = op as RuleProposed;
  if (queryScalar(db, 'SELECT 1 FROM rules WHERE id = ?', [r.id])) return;
  const body = `${r.text}\n${r.category}`;
  db.run(`INSERT INTO ${RULES_FTS}(terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?)`, [indexTerms(body), body, r.at, r.scope, r.id]);
  const docid = Number(queryScalar(db, 'SELECT last_insert_rowid()'));
  db.run(
    'INSERT INTO rules(id, text, scope, target, category, rationale, proposed_by, session_id, proposed_at, fts_docid, shared_scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [r.id, r.text, r.scope, r.target, r.category, r.rationale, r.proposedBy, r.sessionId, r.at, docid, r.sharedScope ?? null],
  );
}

function applyDecided(db: Database, op: Operation): void {
  const d = op as RuleDecided;
  db.run('INSERT INTO rule_decisions(rule_id, machine_id, decision, approver, reason, decided_at) VALUES (?, ?, ?, ?, ?, ?)', [d.ruleId, d.machineId, d.decision, d.approver, d.reason, d.at]);
}

export const rulesModule: StoreModule = {
  name: 'rules',
  migrations: MIGRATIONS,
  appliers: {
    'rules.proposed': applyProposed,
    'rules.decided': applyDecided,
  },
};
