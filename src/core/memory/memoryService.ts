import { newId, newIdAfter } from '../ids';
import { refuse, type Refusal } from '../refusal';
import { matchedExcerpts, searchWithPartial } from '../search/partialMatches';
import type { SearchSort } from '../search/rank';
import type { Store } from '../store/store';
import { Conditions, queryRows, type Database } from '../store/sqlite';
import { escapeControls, normalizeKey, textProblem } from '../text/textRules';
import { iso, parseInstant } from '../text/time';
import { FACT_COLUMNS, factValue, type FactValue } from './factRows';
import { memoryCounts } from './memoryCounts';
import { MEMORY_FTS, type FactRemembered, type FactSaved } from './memorySchema';
import { DEFAULT_SCOPE, scopeProblem } from './scope';
import { SemanticService, type IndexProgress, type SemanticState } from './semantic/semanticService';
import { chunkRefs } from './recall/chunkRefs';
import { Redaction } from '../privacy/redaction';
import { timezoneProblem, VaultService } from './vault/vaultService';

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

export type { FactValue } from './factRows';

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
  constructor(
    private readonly store: Store,
    readonly vault: VaultService = new VaultService(store),
    private readonly semantic: SemanticService = new SemanticService(store),
    private readonly redaction: Redaction = new Redaction(),
  ) {}

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

  async saveFact(given: FactInput, client: string, givenStatement: string | null = null, timezone?: string) {
    for (const field of ['subject', 'predicate', 'object'] as const) {
      const problem = textProblem(field, given[field]);
      if (problem) return refuse(`${problem}. Nothing was saved.`);
      if (!given[field].trim()) return refuse(`${field} is empty. Nothing was saved.`);
    }
    const scope = given.scope ?? DEFAULT_SCOPE;
    const bad = scopeProblem(scope) ?? timezoneProblem(timezone);
    if (bad) return refuse(`${bad}. Nothing was saved.`);
    // What is kept, and answered back, is the fact less its secrets (the value read after its predicate).
    const redacted = await this.redaction.value({ subject: given.subject, predicate: given.predicate, object: given.object, statement: givenStatement }, scope);
    const input: FactInput = { ...given, subject: redacted.subject, predicate: redacted.predicate, object: redacted.object };
    const statement = redacted.statement;
    const source = input.source ?? client;
    const cites = input.cites ?? [];

    const saved = await this.store.commit((db) => {
      const previous = currentFact(db, input.subject, input.predicate, scope);
      // Every machine orders a fact's values by (time, id) (memorySchema): this value replaces
      // the current one, so it is recorded no earlier and, in the same millisecond, sorts after it.
      const at = Math.max(this.store.now, previous?.recordedAt ?? -Infinity);
      const id = previous && previous.recordedAt === at ? newIdAfter(at, previous.id) : newId(at);
      const fact: FactSaved = {
        op: 'memory.fact.saved', at, id,
        subject: input.subject, predicate: input.predicate, object: input.object,
        scope, source, statement, cites,
      };
      if (statement === null) return { op: fact, result: { id: fact.id, at, previous, entry: undefined } };
      // The sentence goes to the day log in the same operation: one durable append per remember.
      const entry = this.vault.decideEntry(db, { text: statement, scope, source, cites, timezone }, client, fact.id, at);
      const op: FactRemembered = { ...fact, op: 'memory.fact.remembered', entry: entry.fields };
      return { op, result: { id: fact.id, at, previous, entry }, undo: entry.undo };
    });
    if (saved.entry) this.vault.entryCommitted(saved.entry);
    const noteId = saved.entry?.result.id ?? null;
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
      ...(saved.entry?.result.warning ? { warning: saved.entry.result.warning } : {}),
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
    // Retired values are out of recall; as_of reads valid time (when a value was true).
    const where = new Conditions('subject_key = ?', normalizeKey(input.subject))
      .add('retired_at IS NULL')
      .addIf(input.predicate === undefined ? undefined : normalizeKey(input.predicate), 'predicate_key = ?')
      .addIf(input.scope, 'scope = ?')
      .addIf(asOf, 'coalesce(valid_from, recorded_at) <= ?');
    const rows = queryRows(this.store.db, `SELECT ${FACT_COLUMNS} FROM facts WHERE ${where.sql} ORDER BY recorded_at DESC, id DESC`, where.params);
    const values = rows.map((r) => factValue(r, asOf)).filter((v) => input.include_history || v.status === 'current');
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
    // The shown rows are read once, with created_at where the scorer reads it, for both the excerpt and the fields.
    const found = searchWithPartial(db, MEMORY_FTS, { query: input.query, limit: topK, sort: input.sort ?? 'relevance', scope: input.scope, now: this.store.now, columns: ['body', 'ref', 'scope'] }, this.store.version);
    if (!found.ok) return refuse(found.reason);
    const ids = found.hits.map((h) => h.docid);
    const refs = found.rows ?? new Map<number, Record<string, unknown>>();
    const texts = new Map(ids.map((id) => [id, bodyOf(refs.get(id))]));
    const excerpts = matchedExcerpts(found, texts, 16);
    // Only note chunks are in note_chunks (ref note:…): most answers need no lookup at all.
    const chunks = chunkRefs(db, ids.filter((id) => String(refs.get(id)?.ref ?? '').startsWith('note:')));
    const hits = found.hits.map((h) => {
      const row = refs.get(h.docid);
      const ref = String(row?.ref ?? '');
      const chunk = chunks.get(h.docid);
      return {
        id: ref,
        kind: ref.startsWith('fact:') ? ('fact' as const) : ('note' as const),
        ...(ref.startsWith('fact:') ? {} : { path: ref.slice(ref.indexOf(':') + 1).replace(/#[0-9a-f]+$/, '') }),
        ...(chunk ? { chunk: chunk.seq, line: chunk.line } : {}),
        text: texts.get(h.docid) ?? '',
        snippet: excerpts.get(h.docid) ?? '',
        scope: String(row?.scope ?? ''),
        created_at: iso(h.createdAt),
        score: round(h.bm25),
        matched: h.matched,
      };
    });
    return { ok: true as const, query: input.query, hits, total: found.total, shown: hits.length, index: this.vault.index() };
  }

  status() {
    const semantic = this.semantic.state();
    return {
      ok: true as const,
      ...memoryCounts(this.store.db),
      semantic: semantic.semantic,
      semantic_reason: semantic.semantic ? null : `${semantic.reason ?? 'semantic search is off'}; search_text answers keyword queries`,
      ...(semantic.model ? { embeddings: embeddingsStatus(semantic, this.semantic.progress()) } : {}),
      vault: { path: this.vault.root, ...this.vault.index() },
      store: { home: this.store.home, journal_problems: this.store.journalProblems },
      memory: this.store.memoryStatus(),
      warnings: this.store.warnings.slice(-20),
    };
  }

  /** memory_status as the tool answers it: asks a configured embedding endpoint first, so `semantic` is current. */
  async statusNow() {
    await this.semantic.probe();
    return this.status();
  }

  private async addNote(text: string, opts: { scope?: string | undefined; source?: string | undefined; cites?: string[] | undefined; timezone?: string | undefined }, client: string, factId: string | null) {
    return this.vault.addEntry({ text, scope: opts.scope, source: opts.source, cites: opts.cites, timezone: opts.timezone }, client, factId);
  }
}

/** memory_status's `embeddings`: which model, from where, and how far indexing has got. */
function embeddingsStatus(state: SemanticState, progress: IndexProgress | undefined) {
  return {
    provider: state.provider,
    model: state.model,
    ...(state.provider === 'endpoint' ? { endpoint: state.source } : { model_dir: state.source, loaded: state.loaded === true }),
    ...(progress ? { indexed: progress.indexed, total: progress.total, not_embedded: progress.total - progress.indexed, memory: progress.memory, history: progress.history, indexing: progress.indexing } : {}),
    ...(progress?.error ? { error: progress.error } : {}),
    ...(progress?.paused ? { paused: progress.paused } : {}),
  };
}

function currentFact(db: Database, subject: string, predicate: string, scope: string): { id: string; object: string; recordedAt: number } | undefined {
  const row = queryRows(db, 'SELECT id, object, recorded_at FROM facts WHERE subject_key = ? AND predicate_key = ? AND scope = ? AND superseded_at IS NULL', [normalizeKey(subject), normalizeKey(predicate), scope])[0];
  return row ? { id: String(row.id), object: String(row.object), recordedAt: Number(row.recorded_at) } : undefined;
}

function bodyOf(row: Record<string, unknown> | undefined): string {
  return row?.body === null || row?.body === undefined ? '' : String(row.body);
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
