import { Conditions, queryRows, type Database, type SqlValue } from '../../store/sqlite';
import { iso } from '../../text/time';
import { FACT_COLUMNS, factKey, factValue, type FactValue } from '../factRows';
import { RULE_PREDICATES } from './queryWords';

/** A fact as recall returns it: the value, when it was true, when it was recorded (what replaced it is left out). */
export type FactItem = Omit<FactValue, 'valid_to' | 'superseded_at' | 'superseded_by'> & { valid_to?: string };

export interface NoteItem {
  id: string;
  kind: 'entry' | 'note';
  scope: string;
  created_at: string;
  text: string;
  chunk?: number;
  /** Set when only the start of the text fitted; read_memory returns it whole. */
  truncated?: true;
  full_tokens?: number;
}

/** The grouping key of a fact's history. */
export interface Keyed {
  key: string;
}

/** The recall form of a fact value: what replaced it is a retrieve_memory away, and a current value has no end. */
function toFact(r: Record<string, SqlValue>): FactItem & Keyed {
  const { valid_to: validTo, ...value } = factValue(r);
  const item: FactItem & Keyed & Partial<Pick<FactValue, 'superseded_at' | 'superseded_by'>> = { ...value, ...(validTo !== null ? { valid_to: validTo } : {}), key: factKey(r) };
  delete item.superseded_at;
  delete item.superseded_by;
  return item;
}

export function factsByIds(db: Database, ids: readonly string[]): Map<string, FactItem & Keyed> {
  if (!ids.length) return new Map();
  const rows = queryRows(db, `SELECT ${FACT_COLUMNS} FROM facts WHERE retired_at IS NULL AND id IN (${ids.map(() => '?').join(',')})`, [...ids]);
  return new Map(rows.map((r) => [`fact:${String(r.id)}`, toFact(r)]));
}

/** Of these fact ids, the live ones with their predicate key, read from the facts_ranked index alone (memorySchema.ts). */
export function liveFacts(db: Database, ids: readonly string[]): Map<string, string> {
  if (!ids.length) return new Map();
  const rows = queryRows(db, `SELECT id, predicate_key FROM facts WHERE retired_at IS NULL AND id IN (${ids.map(() => '?').join(',')})`, [...ids]);
  return new Map(rows.map((r) => [String(r.id), String(r.predicate_key)]));
}

/** Rows read at a time when the packer reaches a candidate not read yet. */
const FACT_SLICE = 24;

/**
 * Fact candidates in the order they are offered, each row read only when asked for, a slice of
 * those after it with it: a reply holds the first few, and the packer stops measuring after a
 * run of misses (getContext.ts), so of the hundreds of facts a request ranks most are only
 * counted. A row is read the same way whenever it is read.
 */
export class FactRows {
  /** Undefined for a row looked for and not found. */
  private readonly rows: Map<string, (FactItem & Keyed) | undefined>;

  constructor(
    private readonly db: Database,
    /** The candidates' ledger ids (without the reply's `fact:`), best first. */
    readonly ids: readonly string[],
    /** Rows already read, by ledger id (the rules a permission question puts first). */
    held: ReadonlyMap<string, FactItem & Keyed> = new Map(),
  ) {
    this.rows = new Map(held);
  }

  get length(): number {
    return this.ids.length;
  }

  /** The i-th candidate's row, or undefined when it is no longer live. */
  row(i: number): (FactItem & Keyed) | undefined {
    const id = this.ids[i] as string;
    if (!this.rows.has(id)) {
      const slice = this.ids.slice(i, i + FACT_SLICE).filter((x) => !this.rows.has(x));
      const found = factsByIds(this.db, slice);
      for (const x of slice) this.rows.set(x, found.get(`fact:${x}`));
    }
    return this.rows.get(id);
  }
}

/** Of these entry ids, the live ones with their scope, read from the notes_ranked index alone (memorySchema.ts). */
export function liveEntries(db: Database, ids: readonly string[]): Map<string, string> {
  if (!ids.length) return new Map();
  const rows = queryRows(db, `SELECT id, scope FROM notes WHERE retired_at IS NULL AND id IN (${ids.map(() => '?').join(',')})`, [...ids]);
  return new Map(rows.map((r) => [String(r.id), String(r.scope)]));
}

/** A note candidate: a day-log entry by id, its row read when reached, or an item already read (a note chunk, a profile's note). */
export type NoteCandidate = { entry: string } | { item: NoteItem };

/** Note candidates in the order offered, an entry's row read only when asked for, with a slice of the entries after it (as FactRows). */
export class NoteRows {
  /** Undefined for an entry looked for and not found. */
  private readonly rows = new Map<string, NoteItem | undefined>();

  constructor(
    private readonly db: Database,
    readonly list: readonly NoteCandidate[],
  ) {}

  get length(): number {
    return this.list.length;
  }

  /** The i-th candidate, or undefined when it is no longer live. */
  row(i: number): NoteItem | undefined {
    const c = this.list[i] as NoteCandidate;
    if ('item' in c) return c.item;
    if (!this.rows.has(c.entry)) {
      const slice = this.list.slice(i, i + FACT_SLICE).flatMap((x) => ('entry' in x && !this.rows.has(x.entry) ? [x.entry] : []));
      const found = entriesByIds(this.db, slice);
      for (const id of slice) this.rows.set(id, found.get(id));
    }
    return this.rows.get(c.entry);
  }
}

/**
 * Current rule/policy/approval facts, newest first. One indexed "newest n" read per rule
 * predicate, merged here: an IN over the predicates would sort every rule in the store.
 */
export function ruleFacts(db: Database, scope: string | undefined, limit: number): (FactItem & Keyed)[] {
  const rows: Record<string, SqlValue>[] = [];
  for (const predicate of RULE_PREDICATES) {
    const where = new Conditions('predicate_key = ?', predicate).add('superseded_at IS NULL').add('retired_at IS NULL').addIf(scope, 'scope = ?');
    rows.push(...queryRows(db, `SELECT ${FACT_COLUMNS} FROM facts WHERE ${where.sql} ORDER BY recorded_at DESC LIMIT ?`, [...where.params, limit]));
  }
  rows.sort((a, b) => Number(b.recorded_at) - Number(a.recorded_at) || (String(a.id) < String(b.id) ? 1 : -1));
  return rows.slice(0, limit).map(toFact);
}

export function recentFacts(db: Database, scope: string | undefined, limit: number): (FactItem & Keyed)[] {
  const where = new Conditions('superseded_at IS NULL').add('retired_at IS NULL').addIf(scope, 'scope = ?');
  return queryRows(db, `SELECT ${FACT_COLUMNS} FROM facts WHERE ${where.sql} ORDER BY recorded_at DESC, id DESC LIMIT ?`, [...where.params, limit]).map(toFact);
}

/** The superseded values of one fact's subject + predicate + scope, newest first. */
export function historyOf(db: Database, fact: FactItem & Keyed, limit: number): FactItem[] {
  const [subjectKey, predicateKey, scope] = fact.key.split('\u0000') as [string, string, string];
  return queryRows(
    db,
    `SELECT ${FACT_COLUMNS} FROM facts WHERE subject_key = ? AND predicate_key = ? AND scope = ? AND superseded_at IS NOT NULL AND retired_at IS NULL
      ORDER BY recorded_at DESC, id DESC LIMIT ?`,
    [subjectKey, predicateKey, scope, limit],
  ).map((r) => withoutKey(toFact(r)));
}

export function withoutKey(f: FactItem & Partial<Keyed>): FactItem {
  const rest: FactItem & Partial<Keyed> = { ...f };
  delete rest.key;
  return rest;
}

export function entriesByIds(db: Database, ids: readonly string[]): Map<string, NoteItem> {
  if (!ids.length) return new Map();
  const rows = queryRows(db, `SELECT id, scope, created_at, text FROM notes WHERE retired_at IS NULL AND id IN (${ids.map(() => '?').join(',')})`, [...ids]);
  return new Map(rows.map((r) => [String(r.id), { id: String(r.id), kind: 'entry', scope: String(r.scope), created_at: iso(Number(r.created_at)), text: String(r.text) }]));
}

/** Note chunks by their FTS row, as recall items (id `note:<path>`, with the chunk number). */
export function chunksByDocids(db: Database, docids: readonly number[]): Map<number, NoteItem> {
  if (!docids.length) return new Map();
  const rows = queryRows(
    db,
    `SELECT c.fts_docid, c.seq, c.text, f.path, f.scope, coalesce(f.note_date, f.indexed_at) AS at FROM note_chunks c JOIN vault_files f ON f.id = c.file_id
      WHERE f.retired_at IS NULL AND c.fts_docid IN (${docids.map(() => '?').join(',')})`,
    [...docids],
  );
  return new Map(
    rows.map((r) => [Number(r.fts_docid), { id: `note:${String(r.path)}`, kind: 'note', scope: String(r.scope), created_at: iso(Number(r.at)), text: String(r.text), chunk: Number(r.seq) }]),
  );
}

/** The newest entries and notes (a note by its first chunk), newest first. */
export function recentNotes(db: Database, scope: string | undefined, limit: number): NoteItem[] {
  // Two indexed "newest n" reads merged here: a sorted UNION would read every row of both.
  const entryWhere = new Conditions('retired_at IS NULL').addIf(scope, 'scope = ?');
  const entries = queryRows(db, `SELECT id, scope, created_at AS at, text FROM notes WHERE ${entryWhere.sql} ORDER BY created_at DESC, id DESC LIMIT ?`, [
    ...entryWhere.params,
    limit,
  ]).map((r): NoteItem & { at: number } => ({ id: String(r.id), kind: 'entry', scope: String(r.scope), created_at: iso(Number(r.at)), text: String(r.text), at: Number(r.at) }));
  const noteWhere = new Conditions('f.retired_at IS NULL').add("f.kind = 'note'").addIf(scope, 'f.scope = ?');
  const notes = queryRows(
    db,
    `SELECT f.path, f.scope, coalesce(f.note_date, f.indexed_at) AS at, c.text FROM vault_files f JOIN note_chunks c ON c.file_id = f.id AND c.seq = 0
      WHERE ${noteWhere.sql} ORDER BY at DESC, f.path LIMIT ?`,
    [...noteWhere.params, limit],
  ).map((r): NoteItem & { at: number } => ({ id: `note:${String(r.path)}`, kind: 'note', scope: String(r.scope), created_at: iso(Number(r.at)), text: String(r.text), chunk: 0, at: Number(r.at) }));
  return [...entries, ...notes]
    .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
    .slice(0, limit)
    .map((item) => {
      const out: NoteItem & { at?: number } = { ...item };
      delete out.at;
      return out;
    });
}
