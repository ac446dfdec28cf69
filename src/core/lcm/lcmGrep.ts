import { HISTORY_FTS } from '../history/historySchema';
import { refuse, type Refusal } from '../refusal';
import { excerptsOf, searchFts, type HitRow } from '../search/ftsSearch';
import { sortValue, topK, type Ranked, type SearchSort } from '../search/rank';
import type { Store } from '../store/store';
import { Conditions, queryRows, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';
import { BlobGrams, gramKeys, mayHold } from './blobGrams';
import { messageCandidates, summaryCandidates, type Statement } from './grepCandidates';
import type { ConversationScope } from './conversations';
import { allMessages, ExcludedEvents } from './excludedEvents';
import { FtsVocabulary, termTest } from './ftsVocabulary';
import { literalCheck, regexSnippet, testText, type LiteralCheck, type Outcome } from './grepText';
import { EXCLUDED_SOURCES } from './lcmConfig';
import { LCM_SUMMARY_FTS } from './lcmSchema';
import { compilePattern, ftsPrefilter, regexSyntaxIn, type CompiledPattern } from './regexPattern';

export type GrepScope = 'messages' | 'summaries' | 'both';

export interface GrepRequest {
  pattern: string;
  mode: 'regex' | 'full_text';
  scope: GrepScope;
  since?: number | undefined;
  before?: number | undefined;
  limit: number;
  sort: SearchSort;
}

export interface GrepMatch {
  id: number | string;
  type: 'message' | 'summary';
  snippet: string;
  conversationId: number;
  createdAt: string;
  /** Messages: who spoke (user, assistant, tool_call, tool_result…), the tool, and the leaf summary that covers it. */
  role?: string;
  toolName?: string | null;
  coveredBy?: string | null;
  depth?: number;
  kind?: string;
  summaryId?: string;
}

type Source = 'message' | 'summary';

interface Candidate {
  id: number;
  at: number;
  /** Empty when `tested` already holds the outcome. */
  text: string;
  /** A large event's blob: the same content, and so the same outcome, wherever it recurs. */
  blob?: string | undefined;
  tested?: Tested | undefined;
}

/** A blob already tested in this call: its outcome, its text's length (for the stats) and, once shown, its excerpt. */
interface Tested {
  outcome: Outcome;
  chars: number;
  snippet?: string;
}

/**
 * Blobs are content-addressed, so a large output that recurs (a file read again, a command
 * re-run) is one blob: within one search it is read, checked and tested once. What is kept is
 * the outcome and the excerpt, not the text: keeping decoded texts alive through a long scan
 * had the garbage collector copying tens of megabytes for nothing.
 */
interface BlobMemo {
  /** Blobs that cannot hold the pattern's literals (their filter or their text said so). */
  ruledOut: Set<string>;
  tested: Map<string, Tested>;
  /** The pattern's literals as keys of the blobs' trigram filters, when they can rule a blob out. */
  keys: Uint8Array[] | undefined;
}

interface Hit {
  source: Source;
  ranked: Ranked;
  snippet?: string;
}

/** How regex candidates were narrowed before the regex ran, reported so the cost is visible. */
export interface ScanStats {
  prefilter: 'fts' | 'vocabulary' | 'substring' | 'none';
  candidates: number;
  /** Candidates the regex ran on: those that hold the pattern's literals (when a plain search can tell). */
  scanned: number;
  bytesScanned: number;
  /** Large events' blobs opened and decoded; the others were ruled out by their trigram filter (or read earlier in the call). */
  blobsRead: number;
}

const FETCH_BATCH = 200;

export class LcmGrep {
  private readonly excluded: ExcludedEvents;
  private readonly vocabulary = new FtsVocabulary();
  private readonly grams: BlobGrams;

  constructor(private readonly store: Store) {
    this.excluded = new ExcludedEvents(store);
    this.grams = new BlobGrams(store.home);
  }

  grep(req: GrepRequest, scope: ConversationScope) {
    const hits = req.mode === 'full_text' ? this.fullText(req, scope) : this.regex(req, scope);
    if ('ok' in hits) return hits;
    return { ok: true as const, matches: this.present(hits.hits), count: hits.hits.length, truncated: hits.truncated, ...(hits.stats ? { scan: hits.stats } : {}) };
  }

  private fullText(req: GrepRequest, scope: ConversationScope): { hits: Hit[]; truncated: boolean; stats?: undefined } | Refusal {
    const syntax = regexSyntaxIn(req.pattern);
    if (syntax) {
      return refuse(`mode "full_text" searches words and "quoted phrases", not patterns, and this pattern holds ${syntax}. Use mode "regex" for a pattern, or write the words alone.`);
    }
    const db = this.store.db;
    // The shown rows' text comes with the scorer's own read of them, so no statement reads them again for the excerpts.
    const common = { query: req.pattern, limit: req.limit, sort: req.sort, since: req.since, before: req.before, now: this.store.now, columns: ['body'] };
    const found: Hit[] = [];
    let total = 0;
    for (const source of sources(req.scope)) {
      const table = source === 'message' ? HISTORY_FTS : LCM_SUMMARY_FTS;
      const r =
        source === 'message'
          ? scope.all
            ? allMessages(db, common, this.excluded.docids())
            : searchFts(db, table, { ...common, filters: { session_id: scope.sessionId } })
          : searchFts(db, table, { ...common, ...(scope.all ? {} : { scope: scope.sessionId }) });
      if (!r.ok) return refuse(r.reason);
      total += r.total;
      const texts = new Map(r.hits.map((h) => [h.docid, bodyOf(r.rows?.get(h.docid))]));
      const excerpts = excerptsOf(db, table, r.match, texts, 24, r.total);
      for (const h of r.hits) found.push({ source, ranked: h, snippet: excerpts.get(h.docid) ?? '' });
    }
    const best = topK(found.map((f) => f.ranked), req.limit);
    const bySource = new Map(found.map((f) => [f.ranked, f]));
    return { hits: best.map((r) => bySource.get(r) as Hit), truncated: total > best.length };
  }

  private regex(req: GrepRequest, scope: ConversationScope): { hits: Hit[]; truncated: boolean; stats: Record<string, ScanStats> } | Refusal {
    const compiled = compilePattern(req.pattern);
    if ('error' in compiled) return refuse(`pattern ${JSON.stringify(req.pattern.slice(0, 120))}: ${compiled.error}. Nothing was searched.`);
    const found: Hit[] = [];
    const stats: Record<string, ScanStats> = {};
    let truncated = false;
    for (const source of sources(req.scope)) {
      const r = this.scan(source, compiled, req, scope);
      found.push(...r.hits);
      stats[source === 'message' ? 'messages' : 'summaries'] = r.stats;
      truncated ||= r.truncated;
    }
    const best = topK(found.map((f) => f.ranked), req.limit);
    const bySource = new Map(found.map((f) => [f.ranked, f]));
    return { hits: best.map((r) => bySource.get(r) as Hit), truncated: truncated || found.length > best.length, stats };
  }

  /**
   * Candidates are narrowed in SQLite — by the FTS index when the pattern's required literal
   * holds a whole word, by the index terms containing it when it lies inside words, else by
   * instr() on the stored text — then tested with the regex. Recency order reads them newest
   * first and stops at `limit` matches; relevance and hybrid read them all, in one pass.
   * Events whose full text lives in the blob store are always candidates: the index and the
   * inline text hold only their first part.
   */
  private scan(source: Source, pattern: CompiledPattern, req: GrepRequest, scope: ConversationScope) {
    const msg = source === 'message';
    const at = msg ? 'coalesce(e.created_at, s.updated_at, 0)' : 'coalesce(x.latest_at, x.created_at)';
    const where = new Conditions();
    if (scope.all) where.add(`s.source NOT IN (${EXCLUDED_SOURCES.map(() => '?').join(',')})`, ...EXCLUDED_SOURCES);
    else where.add(msg ? 'e.session_id = ?' : 'x.session_id = ?', scope.sessionId);
    where.addIf(req.since, `${at} >= ?`).addIf(req.before, `${at} < ?`);
    const prefilter = this.prefilter(source, pattern);
    // Large events come with their blob hash, so their text comes straight from the blob without a second visit to their row.
    const statements = (msg ? messageCandidates : summaryCandidates)(at, { sql: where.sql, params: where.params }, prefilter);
    const stats: ScanStats = { prefilter: prefilter?.name ?? 'none', candidates: 0, scanned: 0, bytesScanned: 0, blobsRead: 0 };
    const hits: Hit[] = [];
    const now = this.store.now;
    const stopEarly = req.sort === 'recency';
    let truncated = false;
    const holds = literalCheck(pattern);
    const memo: BlobMemo = { ruledOut: new Set(), tested: new Map(), keys: msg ? gramKeys(pattern) : undefined };
    if (msg) this.grams.refresh();
    const candidates = stopEarly
      ? this.newestFirst(source, statements.newestFirst, stats, holds, memo)
      : this.allInOnePass(statements.allInOnePass, stats, holds, memo);
    try {
      for (const { id, at: createdAt, text, blob, tested: known } of candidates) {
        stats.scanned++;
        stats.bytesScanned += known ? known.chars : text.length;
        const outcome = known ? known.outcome : testText(pattern.regex, text, !stopEarly);
        const tested = known ?? (blob === undefined ? undefined : { outcome, chars: text.length });
        if (tested && !known && blob !== undefined) memo.tested.set(blob, tested);
        if (!outcome) continue;
        if (stopEarly && hits.length >= req.limit) {
          truncated = true;
          break;
        }
        // A blob's first match either ended the scan or was excerpted here, so a repeat always finds its excerpt.
        const snippet = tested?.snippet ?? regexSnippet(text, outcome.index, outcome.length);
        if (tested) tested.snippet = snippet;
        const { count } = outcome;
        hits.push({ source, ranked: { docid: id, bm25: count, createdAt, score: sortValue(req.sort, count, createdAt, now) }, snippet });
      }
    } finally {
      // The filters of the blobs this call read are kept even when it stopped early.
      if (msg) this.grams.flush();
    }
    // A full pass reads in whatever order SQLite found the rows; the hits go on newest first, as a recency scan lists them.
    if (!stopEarly) hits.sort((a, b) => b.ranked.createdAt - a.ranked.createdAt || b.ranked.docid - a.ranked.docid);
    return { hits, truncated, stats };
  }

  private prefilter(source: Source, pattern: CompiledPattern): { sql: string; params: SqlValue[]; name: ScanStats['prefilter'] } | undefined {
    if (!pattern.literals.length) return undefined;
    const msg = source === 'message';
    const match = pattern.literals.map(ftsPrefilter).filter((m): m is string => !!m).join(' ');
    // These narrow inline texts only: large events are candidates whatever their indexed head holds.
    if (match) {
      const table = msg ? HISTORY_FTS : LCM_SUMMARY_FTS;
      return { sql: `${msg ? 'e.id' : 'x.n'} IN (SELECT docid FROM ${table} WHERE ${table} MATCH ?)`, params: [match], name: 'fts' };
    }
    const vocabulary = this.vocabularyPrefilter(source, pattern);
    if (vocabulary) return vocabulary;
    const column = msg ? 'e.text' : 'x.content';
    const literal = pattern.literals[0] as string;
    if (!pattern.caseInsensitive) return { sql: `instr(${column}, ?) > 0`, params: [literal], name: 'substring' };
    // SQLite's lower() folds ASCII only, so only an ASCII literal can be narrowed case-insensitively.
    if (/^[\x20-\x7e]+$/.test(literal) && !pattern.regex.flags.includes('u')) {
      return { sql: `instr(lower(${column}), ?) > 0`, params: [literal.toLowerCase()], name: 'substring' };
    }
    return undefined;
  }

  /**
   * For a literal inside words (no whole word for the phrase above): the rows holding an index
   * term that contains it, found through the index's vocabulary, instead of a scan of every text.
   */
  private vocabularyPrefilter(source: Source, pattern: CompiledPattern): { sql: string; params: SqlValue[]; name: 'vocabulary' } | undefined {
    const foldsBeyondAscii = pattern.caseInsensitive && pattern.regex.flags.includes('u');
    const test = pattern.literals.map((l) => termTest(l, foldsBeyondAscii)).find((t) => t !== undefined);
    if (!test) return undefined;
    const msg = source === 'message';
    const table = msg ? HISTORY_FTS : LCM_SUMMARY_FTS;
    const match = this.vocabulary.matchingTerms(this.store.db, table, test);
    if (match === undefined) return undefined;
    // No term holds the literal: no inline text can (large events are still read).
    if (!match) return { sql: '0', params: [], name: 'vocabulary' };
    return { sql: `${msg ? 'e.id' : 'x.n'} IN (SELECT docid FROM ${table} WHERE ${table} MATCH ?)`, params: [match], name: 'vocabulary' };
  }

  /** Candidates newest first, their texts read a batch at a time: recency stops at `limit` matches, so only what it needs is read. */
  private *newestFirst(source: Source, statement: Statement, stats: ScanStats, holds: LiteralCheck | undefined, memo: BlobMemo): Generator<Candidate> {
    const db = this.store.db;
    const ids = queryRows(db, statement.sql, statement.params);
    stats.candidates = ids.length;
    for (let i = 0; i < ids.length; i += FETCH_BATCH) {
      const batch = ids.slice(i, i + FETCH_BATCH);
      const texts = this.texts(source, batch, holds, memo, stats);
      for (const row of batch) {
        const blob = typeof row.blob === 'string' ? row.blob : undefined;
        const tested = blob === undefined ? undefined : memo.tested.get(blob);
        if (tested) {
          yield { id: Number(row.id), at: Number(row.at), text: '', blob, tested };
          continue;
        }
        const text = texts.get(Number(row.id));
        if (text !== undefined) yield { id: Number(row.id), at: Number(row.at), text, blob }; // else it cannot hold the pattern's literals
      }
    }
  }

  /**
   * Every candidate with its text (or blob hash), in the order SQLite finds them: a full pass
   * needs no order, and reading the text beside the id saves visiting every row a second time.
   * Rows are read as arrays (id, at, text or blob): an object per row costs more than the row.
   */
  private *allInOnePass(statements: readonly Statement[], stats: ScanStats, holds: LiteralCheck | undefined, memo: BlobMemo): Generator<Candidate> {
    for (const { sql, params } of statements) {
      const stmt = this.store.db.prepare(sql);
      try {
        stmt.bind(params);
        const large = stmt.getColumnNames()[2] === 'blob';
        while (stmt.step()) {
          stats.candidates++;
          const [id, at, third] = stmt.get();
          const blob = large && typeof third === 'string' ? third : undefined;
          const tested = blob === undefined ? undefined : memo.tested.get(blob);
          if (tested) {
            yield { id: Number(id), at: Number(at), text: '', blob, tested };
            continue;
          }
          const text = blob !== undefined ? this.blobText(blob, holds, memo, stats) : String(third ?? '');
          if (text === undefined || (blob === undefined && holds && !holds.text(text))) continue;
          yield { id: Number(id), at: Number(at), text, blob };
        }
      } finally {
        stmt.free();
      }
    }
  }

  /**
   * A large event's whole text, or undefined when it lacks the pattern's literals. Most large
   * tool outputs lack them: the blob's trigram filter usually says so without the file being
   * opened, else its raw bytes are searched for them before they are decoded, and then neither
   * the decoding nor the regex runs.
   */
  private blobText(hash: string, holds: LiteralCheck | undefined, memo: BlobMemo, stats: ScanStats): string | undefined {
    if (memo.ruledOut.has(hash)) return undefined;
    const filter = memo.keys && this.grams.get(hash);
    if (filter && memo.keys && !mayHold(filter, memo.keys)) {
      memo.ruledOut.add(hash);
      return undefined;
    }
    const bytes = this.store.blobs.get(hash);
    stats.blobsRead++;
    if (bytes) this.grams.add(hash, bytes);
    const decoded = holds?.bytes && bytes && !holds.bytes(bytes) ? null : (bytes?.toString('utf8') ?? '');
    const text = decoded !== null && holds && !holds.bytes && !holds.text(decoded) ? null : decoded;
    if (text === null) memo.ruledOut.add(hash);
    return text ?? undefined;
  }

  /** Candidate texts by id; with `holds`, a text without the pattern's literals is left out before it is decoded or tested. */
  private texts(source: Source, rows: readonly Record<string, SqlValue>[], holds: LiteralCheck | undefined, memo: BlobMemo, stats: ScanStats): Map<number, string> {
    const db = this.store.db;
    const out = new Map<number, string>();
    if (source === 'summary') {
      const ids = rows.map((r) => Number(r.id));
      for (const r of queryRows(db, `SELECT n, content FROM lcm_summaries WHERE n IN (${ids.map(() => '?').join(',')})`, ids)) {
        const text = String(r.content);
        if (!holds || holds.text(text)) out.set(Number(r.n), text);
      }
      return out;
    }
    // The inline head of a large event is not read at all: its whole text comes from the blob,
    // read once per batch (and not at all when an earlier batch tested it).
    const inline: number[] = [];
    const batch = new Map<string, string | undefined>();
    for (const r of rows) {
      if (typeof r.blob !== 'string') inline.push(Number(r.id));
      else if (!memo.tested.has(r.blob)) {
        const text = batch.has(r.blob) ? batch.get(r.blob) : this.blobText(r.blob, holds, memo, stats);
        batch.set(r.blob, text);
        if (text !== undefined) out.set(Number(r.id), text);
      }
    }
    if (!inline.length) return out;
    for (const r of queryRows(db, `SELECT id, text FROM events WHERE id IN (${inline.map(() => '?').join(',')})`, inline)) {
      const text = String(r.text ?? '');
      if (!holds || holds.text(text)) out.set(Number(r.id), text);
    }
    return out;
  }

  /**
   * The shown fields of the hits. A statement costs about as much to compile as to run on 50
   * rows, and a short search's whole budget is a few of them: so one statement per source, each
   * bringing its conversation number along, and none for a source without hits.
   */
  private present(hits: Hit[]): GrepMatch[] {
    const db = this.store.db;
    const msgIds = hits.filter((h) => h.source === 'message').map((h) => h.ranked.docid);
    const sumIds = hits.filter((h) => h.source === 'summary').map((h) => h.ranked.docid);
    const rowsOf = (ids: number[], sql: (list: string) => string) => (ids.length ? queryRows(db, sql(ids.map(() => '?').join(',')), ids) : []);
    // LEFT JOIN sessions: a hit whose session row were missing is still shown, as conversation 0.
    const messages = new Map(rowsOf(msgIds, (list) => `SELECT e.id, c.rowid AS conv, e.kind, e.tool_name, src.summary_id FROM events e LEFT JOIN sessions c ON c.id = e.session_id LEFT JOIN lcm_summary_sources src ON src.event_id = e.id WHERE e.id IN (${list})`).map((r) => [Number(r.id), r]));
    const summaries = new Map(rowsOf(sumIds, (list) => `SELECT x.n, x.id, c.rowid AS conv, x.depth, x.kind FROM lcm_summaries x LEFT JOIN sessions c ON c.id = x.session_id WHERE x.n IN (${list})`).map((r) => [Number(r.n), r]));
    const conv = (r: Record<string, SqlValue>) => (r.conv === null || r.conv === undefined ? 0 : Number(r.conv));
    return hits.flatMap((h): GrepMatch[] => {
      const createdAt = iso(h.ranked.createdAt);
      if (h.source === 'message') {
        const r = messages.get(h.ranked.docid);
        if (!r) return [];
        const role = String(r.kind);
        return [{ id: h.ranked.docid, type: 'message', snippet: h.snippet ?? '', conversationId: conv(r), createdAt, role, toolName: r.tool_name === null ? null : String(r.tool_name), coveredBy: r.summary_id === null ? null : String(r.summary_id) }];
      }
      const r = summaries.get(h.ranked.docid);
      if (!r) return [];
      const id = String(r.id);
      return [{ id, type: 'summary', snippet: h.snippet ?? '', conversationId: conv(r), createdAt, depth: Number(r.depth), kind: String(r.kind), summaryId: id }];
    });
  }
}


/** A hit's indexed text as snippets() reads it: a missing or NULL body is the empty text. */
function bodyOf(row: HitRow | undefined): string {
  const body = row?.body;
  return body === null || body === undefined ? '' : String(body);
}

function sources(scope: GrepScope): Source[] {
  return scope === 'messages' ? ['message'] : scope === 'summaries' ? ['summary'] : ['message', 'summary'];
}
