import { createHash } from 'node:crypto';
import { newId } from '../ids';
import { refuse, type Refusal } from '../refusal';
import { searchFts, snippets } from '../search/ftsSearch';
import type { SearchSort } from '../search/rank';
import type { Store } from '../store/store';
import { Conditions, queryRows, queryScalar, type Database } from '../store/sqlite';
import { escapeControls, normalizeKey, textProblem } from '../text/textRules';
import { dayIn, iso, parseInstant } from '../text/time';
import { countTokens } from '../text/tokens';
import { MEMORY_FTS, type FactSaved, type NoteAdded } from './memorySchema';
import { DEFAULT_SCOPE, scopeProblem } from './scope';

export interface FactInput {
  subject: string;
  predicate: string;
  object: string;
  source?: string | undefined;
  scope?: string | undefined;
  cites?: string[] | undefined;
}

export interface RememberInput extends Partial<FactInput> {
  statement: string;
  timezone?: string | undefined;
}

export interface FactValue {
  id: string;
  subject: string;
  predicate: string;
  object: string;
  scope: string;
  source: string;
  recorded_at: string;
  status: 'current' | 'historical';
  superseded_at: string | null;
  superseded_by: string | null;
}

export interface RetrieveInput {
  subject: string;
  predicate?: string | undefined;
  include_history?: boolean | undefined;
  as_of?: string | undefined;
  scope?: string | undefined;
}

export interface SearchTextInput {
  query: string;
  top_k?: number | undefined;
  scope?: string | undefined;
  sort?: SearchSort | undefined;
}

/** The statement limit the memory spec sets; longer is refused, never cut. */
export const STATEMENT_MAX = 4000;

/**
 * Facts and notes: the write rules of the memory spec (refuse, never cut; all three of
 * subject/predicate/object or none; a new value supersedes and the old one stays in history)
 * and the reads over them. Knows the store, never VS Code.
 */
export class MemoryService {
  constructor(private readonly store: Store) {}

  async remember(input: RememberInput, client: string) {
    const spo = [input.subject, input.predicate, input.object];
    const given = spo.filter((v) => v !== undefined).length;
    if (given !== 0 && given !== 3) {
      return refuse(`subject, predicate and object go together: ${given} of 3 were given. Send all three for a fact, or none for a note.`);
    }
    if (given === 3) {
      // With a fact, the sentence is kept as written but its control characters are escaped.
      return this.saveFact({ ...(input as FactInput) }, client, escapeControls(input.statement), input.timezone);
    }
    const problem = textProblem('statement', input.statement);
    if (problem) return refuse(`${problem}. Nothing was saved.`);
    return this.addNote(input.statement, input, client, null);
  }

  async saveFact(input: FactInput, client: string, statement: string | null = null, timezone?: string) {
    for (const field of ['subject', 'predicate', 'object'] as const) {
      const problem = textProblem(field, input[field]);
      if (problem) return refuse(`${problem}. Nothing was saved.`);
      if (!input[field].trim()) return refuse(`${field} is empty. Nothing was saved.`);
    }
    const scope = input.scope ?? DEFAULT_SCOPE;
    const bad = scopeProblem(scope) ?? timezoneProblem(timezone);
    if (bad) return refuse(`${bad}. Nothing was saved.`);
    const source = input.source ?? client;
    const cites = input.cites ?? [];

    const saved = await this.store.commit((db) => {
      const at = this.store.now;
      const previous = currentFact(db, input.subject, input.predicate, scope);
      const op: FactSaved = {
        op: 'memory.fact.saved', at, id: newId(at),
        subject: input.subject, predicate: input.predicate, object: input.object,
        scope, source, statement, cites,
      };
      return { op, result: { id: op.id, at, previous } };
    });
    let noteId: string | null = null;
    if (statement !== null) {
      const note = await this.addNote(statement, { scope, source, cites, timezone }, client, saved.id);
      if (note.ok) noteId = note.id;
    }
    return {
      ok: true as const,
      saved: 'fact' as const,
      id: `fact:${saved.id}`,
      subject: input.subject,
      predicate: input.predicate,
      object: input.object,
      scope,
      source,
      recorded_at: iso(saved.at),
      replaced: saved.previous ? { id: `fact:${saved.previous.id}`, object: saved.previous.object, recorded_at: iso(saved.previous.recordedAt) } : null,
      note_id: noteId,
    };
  }

  retrieve(input: RetrieveInput): { ok: true; subject: string; values: FactValue[]; count: number; as_of?: string; note?: string } | Refusal {
    if (input.scope !== undefined) {
      const bad = scopeProblem(input.scope);
      if (bad) return refuse(bad);
    }
    let asOf: number | undefined;
    if (input.as_of !== undefined) {
      asOf = parseInstant(input.as_of);
      if (asOf === undefined) return refuse(`as_of "${input.as_of.slice(0, 60)}" is not an ISO instant such as 2026-11-30T12:00:00Z`);
    }
    const where = new Conditions('subject_key = ?', normalizeKey(input.subject))
      .addIf(input.predicate === undefined ? undefined : normalizeKey(input.predicate), 'predicate_key = ?')
      .addIf(input.scope, 'scope = ?')
      .addIf(asOf, 'recorded_at <= ?');
    const rows = queryRows(this.store.db, `SELECT id, subject, predicate, object, scope, source, recorded_at, superseded_at, superseded_by FROM facts WHERE ${where.sql} ORDER BY recorded_at DESC, id DESC`, where.params);
    const values = rows
      .map((r) => {
        // "Current" is judged at as_of when given: a value superseded later was current then.
        const supersededAt = r.superseded_at === null ? null : Number(r.superseded_at);
        const current = supersededAt === null || (asOf !== undefined && supersededAt > asOf);
        return {
          id: `fact:${String(r.id)}`,
          subject: String(r.subject),
          predicate: String(r.predicate),
          object: String(r.object),
          scope: String(r.scope),
          source: String(r.source),
          recorded_at: iso(Number(r.recorded_at)),
          status: current ? ('current' as const) : ('historical' as const),
          superseded_at: current || supersededAt === null ? null : iso(supersededAt),
          superseded_by: current || r.superseded_by === null ? null : `fact:${String(r.superseded_by)}`,
        };
      })
      .filter((v) => input.include_history || v.status === 'current');
    const out = { ok: true as const, subject: input.subject, values, count: values.length };
    const withAsOf = asOf !== undefined ? { ...out, as_of: iso(asOf) } : out;
    return values.length ? withAsOf : { ...withAsOf, note: `no ${input.include_history ? '' : 'current '}facts about "${input.subject}"${input.scope ? ` in ${input.scope}` : ''}` };
  }

  searchText(input: SearchTextInput) {
    if (input.scope !== undefined) {
      const bad = scopeProblem(input.scope);
      if (bad) return refuse(bad);
    }
    const db = this.store.db;
    const topK = input.top_k ?? 20;
    const found = searchFts(db, MEMORY_FTS, { query: input.query, limit: topK, sort: input.sort ?? 'relevance', scope: input.scope, now: this.store.now });
    if (!found.ok) return refuse(found.reason);
    const ids = found.hits.map((h) => h.docid);
    const excerpts = snippets(db, MEMORY_FTS, found.match, ids);
    const refs = new Map(queryRows(db, `SELECT docid, ref, scope, body FROM ${MEMORY_FTS} WHERE docid IN (${ids.map(() => '?').join(',') || 'NULL'})`, ids).map((r) => [Number(r.docid), r]));
    const hits = found.hits.map((h) => {
      const row = refs.get(h.docid);
      const ref = String(row?.ref ?? '');
      return {
        id: ref,
        kind: ref.startsWith('fact:') ? ('fact' as const) : ('note' as const),
        text: String(row?.body ?? ''),
        snippet: excerpts.get(h.docid) ?? '',
        scope: String(row?.scope ?? ''),
        created_at: iso(h.createdAt),
        score: round(h.bm25),
      };
    });
    return { ok: true as const, query: input.query, hits, total: found.total, shown: hits.length, tokens: countTokens(JSON.stringify(hits)) };
  }

  status() {
    const db = this.store.db;
    const one = (sql: string) => Number(queryScalar(db, sql) ?? 0);
    return {
      ok: true as const,
      notes: one('SELECT count(DISTINCT path) FROM notes'),
      entries: one('SELECT count(*) FROM notes'),
      chunks: one('SELECT count(*) FROM notes WHERE fts_docid IS NOT NULL'),
      entities: one('SELECT count(DISTINCT subject_key) FROM facts'),
      facts: one('SELECT count(*) FROM facts'),
      current_facts: one('SELECT count(*) FROM facts WHERE superseded_at IS NULL'),
      semantic: false,
      semantic_reason: 'no embedding provider is configured; search_text answers keyword queries',
      store: { home: this.store.home, journal_problems: this.store.journalProblems },
      warnings: this.store.warnings.slice(-20),
    };
  }

  private async addNote(text: string, opts: { scope?: string | undefined; source?: string | undefined; cites?: string[] | undefined; timezone?: string | undefined }, client: string, factId: string | null) {
    const scope = opts.scope ?? DEFAULT_SCOPE;
    const bad = scopeProblem(scope) ?? timezoneProblem(opts.timezone);
    if (bad) return refuse(`${bad}. Nothing was saved.`);
    return this.store.commit(() => {
      const at = this.store.now;
      const day = dayIn(at, opts.timezone) as string;
      const id = newId(at);
      const path = `daily/${day}.md`;
      const op: NoteAdded = {
        op: 'memory.note.added', at,
        id: `entry:${path}#${createHash('sha256').update(id).update(text).digest('hex').slice(0, 12)}`,
        path, day, text, scope, source: opts.source ?? client, timezone: opts.timezone ?? null, cites: opts.cites ?? [], factId,
      };
      return { op, result: { ok: true as const, saved: 'note' as const, id: op.id, day, scope, source: op.source, recorded_at: iso(at) } };
    });
  }
}

function timezoneProblem(timezone: string | undefined): string | undefined {
  if (timezone === undefined || dayIn(0, timezone) !== undefined) return undefined;
  return `timezone "${timezone.slice(0, 60)}" is neither an IANA name (America/Sao_Paulo) nor an offset (-03:00)`;
}

function currentFact(db: Database, subject: string, predicate: string, scope: string): { id: string; object: string; recordedAt: number } | undefined {
  const row = queryRows(db, 'SELECT id, object, recorded_at FROM facts WHERE subject_key = ? AND predicate_key = ? AND scope = ? AND superseded_at IS NULL', [normalizeKey(subject), normalizeKey(predicate), scope])[0];
  return row ? { id: String(row.id), object: String(row.object), recordedAt: Number(row.recorded_at) } : undefined;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
