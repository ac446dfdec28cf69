import { createHash } from 'node:crypto';
import type { Database } from '../src/core/store/sqlite';
import { normalizeKey } from '../src/core/text/textRules';
import { MEMORY_FTS } from '../src/core/memory/memorySchema';
import { Rng } from './rng';

/**
 * Builds a big store fast: the same rows the appliers write (notes + memory_fts, facts +
 * memory_fts, superseded facts in the ledger only), inserted through SQL in one transaction
 * instead of one journaled operation each. The caller then makes one real journaled write so
 * `checkpoint()` has something to export (it skips when the journal offset did not move).
 */

export interface BulkCounts {
  notes: number;
  facts: number;
  supersededFacts: number;
}

const PREDICATES = ['is', 'uses', 'prefers', 'depends on', 'runs on', 'is owned by', 'was renamed to', 'lives in', 'deploys to', 'is tested with'];
const START = Date.parse('2024-01-01T00:00:00Z');
const SPAN = Date.parse('2026-01-01T00:00:00Z') - START;

export interface FactRow {
  id: string;
  subject: string;
  predicate: string;
  object: string;
  statement: string;
  at: number;
}

/** Inserts `messages` as notes and `facts` current facts (+ as many superseded values). Returns the FTS bodies in docid order. */
export function bulkLoad(
  db: Database,
  messages: Iterable<string>,
  messageCount: number,
  factCount: number,
  factWords: readonly string[],
  rng: Rng,
  onProgress?: (done: number) => void,
): { counts: BulkCounts; ftsBodies: string[] } {
  const ftsBodies: string[] = [];
  const ftsInsert = db.prepare(`INSERT INTO ${MEMORY_FTS}(body, created_at, scope, ref) VALUES (?, ?, ?, ?)`);
  const noteInsert = db.prepare(
    `INSERT INTO notes(id, path, day, text, scope, source, timezone, cites, fact_id, created_at, fts_docid)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, last_insert_rowid())`,
  );
  const factInsert = db.prepare(
    `INSERT INTO facts(id, subject, subject_key, predicate, predicate_key, object, scope, source, statement, cites, recorded_at, superseded_at, superseded_by, fts_docid)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const scopes = ['global', 'global', 'global', 'project:recollect', 'project:webapp', 'project:infra'];
  const sources = ['copilot', 'claude-code', 'codex', 'cli'];
  const total = messageCount + factCount;
  let notes = 0;
  let facts = 0;
  let superseded = 0;
  db.exec('BEGIN');
  try {
    const it = messages[Symbol.iterator]();
    for (let i = 0; i < total; i++) {
      const at = START + Math.floor((i / total) * SPAN) + rng.int(0, 60_000);
      const scope = rng.pick(scopes);
      const source = rng.pick(sources);
      // Facts are spread through the timeline, one every total/factCount rows.
      const isFact = factCount > 0 && i % Math.max(1, Math.floor(total / factCount)) === 0 && facts < factCount;
      if (isFact || notes >= messageCount) {
        const subject = `${rng.pick(factWords)} ${rng.pick(factWords)}`;
        const predicate = rng.pick(PREDICATES);
        const object = `${rng.pick(factWords)} ${rng.int(1, 20)}`;
        const id = at.toString(36).padStart(9, '0') + rng.hex(10);
        // An older value of the same fact, superseded by this one: history stays in the ledger only.
        const oldId = (at - 1000).toString(36).padStart(9, '0') + rng.hex(10);
        const oldObject = `${rng.pick(factWords)} ${rng.int(1, 20)}`;
        factInsert.run([oldId, subject, normalizeKey(subject), predicate, normalizeKey(predicate), oldObject, scope, source,
          `We decided that ${subject} ${predicate} ${oldObject}.`, '[]', at - 86_400_000, at, id, null]);
        superseded++;
        const body = `${subject} ${predicate} ${object}`;
        ftsInsert.run([body, at, scope, `fact:${id}`]);
        ftsBodies.push(body);
        const docid = Number(lastRowId(db));
        factInsert.run([id, subject, normalizeKey(subject), predicate, normalizeKey(predicate), object, scope, source,
          `Now ${subject} ${predicate} ${object}.`, '[]', at, null, null, docid]);
        facts++;
      } else {
        const it1 = it.next();
        if (it1.done) throw new Error('message iterator ran out');
        const text = it1.value;
        const day = new Date(at).toISOString().slice(0, 10);
        const p = `daily/${day}.md`;
        const id = `entry:${p}#${createHash('sha256').update(String(i)).update(text).digest('hex').slice(0, 12)}`;
        ftsInsert.run([text, at, scope, id]);
        ftsBodies.push(text);
        noteInsert.run([id, p, day, text, scope, source, null, '[]', null, at]);
        notes++;
      }
      if (onProgress && (i + 1) % 10_000 === 0) onProgress(i + 1);
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  } finally {
    ftsInsert.free();
    noteInsert.free();
    factInsert.free();
  }
  return { counts: { notes, facts, supersededFacts: superseded }, ftsBodies };
}

function lastRowId(db: Database): number {
  const r = db.exec('SELECT last_insert_rowid()');
  return Number(r[0]?.values[0]?.[0]);
}
