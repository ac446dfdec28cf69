import { createHash } from 'node:crypto';
import type { Operation } from '../src/core/store/journal';
import type { Database } from '../src/core/store/sqlite';
import { memoryModule, type FactSaved, type NoteAdded } from '../src/core/memory/memorySchema';
import { Rng } from './rng';

/**
 * Builds a big store fast: the memory module's own appliers write every row (notes, facts,
 * superseded facts, memory_fts and whatever else they maintain), exactly as replaying the
 * journal would, but inside one transaction and without a journal line or an fsync each.
 * The caller then makes one real journaled write so `checkpoint()` has something to export
 * (it skips when the journal offset did not move) and closes the store.
 */

export interface BulkCounts {
  notes: number;
  facts: number;
  supersededFacts: number;
}

const PREDICATES = ['is', 'uses', 'prefers', 'depends on', 'runs on', 'is owned by', 'was renamed to', 'lives in', 'deploys to', 'is tested with'];
const START = Date.parse('2024-01-01T00:00:00Z');
const SPAN = Date.parse('2026-01-01T00:00:00Z') - START;

/** `messageCount` notes from `messages`, and `factCount` facts, each first saved with an older value that it then supersedes. */
export function bulkLoad(
  db: Database,
  messages: Iterable<string>,
  messageCount: number,
  factCount: number,
  factWords: readonly string[],
  rng: Rng,
  onProgress?: (done: number) => void,
): BulkCounts {
  const applyNote = memoryModule.appliers['memory.note.added'];
  const applyFact = memoryModule.appliers['memory.fact.saved'];
  if (!applyNote || !applyFact) throw new Error('the memory module no longer has the note/fact appliers this bench drives');
  const scopes = ['global', 'global', 'global', 'project:recollect', 'project:webapp', 'project:infra'];
  const sources = ['copilot', 'claude-code', 'codex', 'cli'];
  const total = messageCount + factCount;
  const factEvery = factCount > 0 ? Math.max(1, Math.floor(total / factCount)) : Infinity;
  const counts: BulkCounts = { notes: 0, facts: 0, supersededFacts: 0 };
  const it = messages[Symbol.iterator]();
  const id = (at: number) => at.toString(36).padStart(9, '0') + rng.hex(10);
  db.exec('BEGIN');
  try {
    for (let i = 0; i < total; i++) {
      const at = START + Math.floor((i / total) * SPAN) + rng.int(0, 60_000);
      const scope = rng.pick(scopes);
      const source = rng.pick(sources);
      if ((i % factEvery === 0 && counts.facts < factCount) || counts.notes >= messageCount) {
        const subject = `${rng.pick(factWords)} ${rng.pick(factWords)}`;
        const predicate = rng.pick(PREDICATES);
        const older = `${rng.pick(factWords)} ${rng.int(1, 20)}`;
        const object = `${rng.pick(factWords)} ${rng.int(1, 20)}`;
        const fact = (when: number, value: string): FactSaved => ({
          op: 'memory.fact.saved', at: when, id: id(when), subject, predicate, object: value, scope, source,
          statement: `We decided that ${subject} ${predicate} ${value}.`, cites: [],
        });
        applyFact(db, fact(at - 86_400_000, older) as Operation);
        applyFact(db, fact(at, object) as Operation);
        counts.facts++;
        counts.supersededFacts++;
      } else {
        const next = it.next();
        if (next.done) throw new Error('message iterator ran out');
        const text = next.value;
        const day = new Date(at).toISOString().slice(0, 10);
        const path = `daily/${day}.md`;
        const note: NoteAdded = {
          op: 'memory.note.added', at,
          id: `entry:${path}#${createHash('sha256').update(String(i)).update(text).digest('hex').slice(0, 12)}`,
          path, day, text, scope, source, timezone: null, cites: [], factId: null,
        };
        applyNote(db, note as Operation);
        counts.notes++;
      }
      if (onProgress && (i + 1) % 10_000 === 0) onProgress(i + 1);
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
  return counts;
}
