import { HISTORY_FTS } from '../history/historySchema';
import { refuse, type Refusal } from '../refusal';
import { excerptsOf, searchFts, type HitRow } from '../search/ftsSearch';
import { sortValue, topK, type Ranked, type SearchSort } from '../search/rank';
import type { Store } from '../store/store';
import { Conditions, queryRows, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';
import type { ConversationScope } from './conversations';
import { allMessages, ExcludedEvents } from './excludedEvents';
import { FtsVocabulary, termTest } from './ftsVocabulary';
import { literalCheck, regexSnippet, type LiteralCheck } from './grepText';
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
  text: string;
  /** A large event's blob: the same content, and so the same outcome, wherever it recurs. */
  blob?: string | undefined;
}

/** What the regex found in one text: where its first match is, and how many there are (1 when not counted). */
type Outcome = { index: number; length: number; count: number } | null;

/**
 * Blobs are content-addressed, so a large output that recurs (a file read again, a command
 * re-run) is one blob: within one search it is read, checked and tested once. Decoded texts are
 * kept up to this many characters; outcomes are small and always kept.
 */
const MEMO_CHARS = 32 * 1024 * 1024;

interface BlobMemo {
  texts: Map<string, string | null>;
  chars: number;
  outcomes: Map<string, Outcome>;
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
}

const FETCH_BATCH = 200;
/** In relevance order a regex match scores by how often it occurs, up to this many. */
const MAX_COUNTED = 1000;

export class LcmGrep {
  private readonly excluded: ExcludedEvents;
  private readonly vocabulary = new FtsVocabulary();

  constructor(private readonly store: Store) {
    this.excluded = new ExcludedEvents(store);
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
    if (prefilter) where.add(prefilter.sql, ...prefilter.params);
    const from = msg ? 'events e JOIN sessions s ON s.id = e.session_id' : 'lcm_summaries x JOIN sessions s ON s.id = x.session_id';
    // Messages bring their blob hash along (the prefilter reads that column anyway), so a large
    // event's text comes straight from its blob without a second visit to its row.
    const select = `SELECT ${msg ? 'e.id' : 'x.n'} AS id, ${at} AS at${msg ? ', e.blob AS blob' : ''}`;
    const stats: ScanStats = { prefilter: prefilter?.name ?? 'none', candidates: 0, scanned: 0, bytesScanned: 0 };
    const hits: Hit[] = [];
    const now = this.store.now;
    const stopEarly = req.sort === 'recency';
    let truncated = false;
    const holds = literalCheck(pattern);
    const memo: BlobMemo = { texts: new Map(), chars: 0, outcomes: new Map() };
    const candidates = stopEarly
      ? this.newestFirst(source, `${select} FROM ${from} WHERE ${where.sql} ORDER BY at DESC, id DESC`, where.params, stats, holds, memo)
      : this.allInOnePass(`${select}, ${msg ? 'CASE WHEN e.blob IS NULL THEN e.text END' : 'x.content'} AS text FROM ${from} WHERE ${where.sql}`, where.params, stats, holds, memo);
    for (const { id, at: createdAt, text, blob } of candidates) {
      stats.scanned++;
      stats.bytesScanned += text.length;
      const known = blob === undefined ? undefined : memo.outcomes.get(blob);
      const outcome = known !== undefined ? known : testText(pattern.regex, text, !stopEarly);
      if (blob !== undefined) memo.outcomes.set(blob, outcome);
      if (!outcome) continue;
      if (stopEarly && hits.length >= req.limit) {
        truncated = true;
        break;
      }
      const { count } = outcome;
      hits.push({ source, ranked: { docid: id, bm25: count, createdAt, score: sortValue(req.sort, count, createdAt, now) }, snippet: regexSnippet(text, outcome.index, outcome.length) });
    }
    // A full pass reads in whatever order SQLite found the rows; the hits go on newest first, as a recency scan lists them.
    if (!stopEarly) hits.sort((a, b) => b.ranked.createdAt - a.ranked.createdAt || b.ranked.docid - a.ranked.docid);
    return { hits, truncated, stats };
  }

  private prefilter(source: Source, pattern: CompiledPattern): { sql: string; params: SqlValue[]; name: ScanStats['prefilter'] } | undefined {
    if (!pattern.literals.length) return undefined;
    const msg = source === 'message';
    const match = pattern.literals.map(ftsPrefilter).filter((m): m is string => !!m).join(' ');
    const spill = msg ? ' OR e.blob IS NOT NULL' : '';
    if (match) {
      const table = msg ? HISTORY_FTS : LCM_SUMMARY_FTS;
      // One id list (the matches, then the large events from their partial index) that SQLite
      // walks by rowid; an OR beside the IN would make it scan every event instead.
      const large = msg ? ' UNION ALL SELECT id FROM events WHERE blob IS NOT NULL' : '';
      return { sql: `${msg ? 'e.id' : 'x.n'} IN (SELECT docid FROM ${table} WHERE ${table} MATCH ?${large})`, params: [match], name: 'fts' };
    }
    const vocabulary = this.vocabularyPrefilter(source, pattern);
    if (vocabulary) return vocabulary;
    const column = msg ? 'e.text' : 'x.content';
    const literal = pattern.literals[0] as string;
    if (!pattern.caseInsensitive) return { sql: `(instr(${column}, ?) > 0${spill})`, params: [literal], name: 'substring' };
    // SQLite's lower() folds ASCII only, so only an ASCII literal can be narrowed case-insensitively.
    if (/^[\x20-\x7e]+$/.test(literal) && !pattern.regex.flags.includes('u')) {
      return { sql: `(instr(lower(${column}), ?) > 0${spill})`, params: [literal.toLowerCase()], name: 'substring' };
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
    const large = msg ? 'SELECT id FROM events WHERE blob IS NOT NULL' : '';
    const indexed = match ? `SELECT docid FROM ${table} WHERE ${table} MATCH ?` : '';
    const ids = [indexed, large].filter(Boolean).join(' UNION ALL ');
    return { sql: ids ? `${msg ? 'e.id' : 'x.n'} IN (${ids})` : '0', params: match ? [match] : [], name: 'vocabulary' };
  }

  /** Candidates newest first, their texts read a batch at a time: recency stops at `limit` matches, so only what it needs is read. */
  private *newestFirst(source: Source, sql: string, params: SqlValue[], stats: ScanStats, holds: LiteralCheck | undefined, memo: BlobMemo): Generator<Candidate> {
    const db = this.store.db;
    const ids = queryRows(db, sql, params);
    stats.candidates = ids.length;
    for (let i = 0; i < ids.length; i += FETCH_BATCH) {
      const batch = ids.slice(i, i + FETCH_BATCH);
      const texts = this.texts(source, batch, holds, memo);
      for (const row of batch) {
        const text = texts.get(Number(row.id));
        if (text !== undefined) yield { id: Number(row.id), at: Number(row.at), text, blob: typeof row.blob === 'string' ? row.blob : undefined }; // else it cannot hold the pattern's literals
      }
    }
  }

  /**
   * Every candidate with its text in one statement, in the order SQLite finds them: a full pass
   * needs no order, and reading the text beside the id saves visiting every row a second time.
   */
  private *allInOnePass(sql: string, params: SqlValue[], stats: ScanStats, holds: LiteralCheck | undefined, memo: BlobMemo): Generator<Candidate> {
    const stmt = this.store.db.prepare(sql);
    try {
      stmt.bind(params);
      while (stmt.step()) {
        stats.candidates++;
        const r = stmt.getAsObject();
        const blob = typeof r.blob === 'string' ? r.blob : undefined;
        const text = blob !== undefined ? this.blobText(blob, holds, memo) : String(r.text ?? '');
        if (text === undefined || (blob === undefined && holds && !holds.text(text))) continue;
        yield { id: Number(r.id), at: Number(r.at), text, blob };
      }
    } finally {
      stmt.free();
    }
  }

  /**
   * A large event's whole text, or undefined when it lacks the pattern's literals: their UTF-8
   * bytes are searched in the raw blob, since most large tool outputs lack them, and then
   * neither the decoding nor the regex runs.
   */
  private blobText(hash: string, holds: LiteralCheck | undefined, memo: BlobMemo): string | undefined {
    const known = memo.texts.get(hash);
    if (known !== undefined) return known ?? undefined;
    const bytes = this.store.blobs.get(hash);
    const text = holds && bytes && !holds.bytes(bytes) ? null : (bytes?.toString('utf8') ?? '');
    if (text === null || memo.chars + text.length <= MEMO_CHARS) {
      memo.texts.set(hash, text);
      memo.chars += text?.length ?? 0;
    }
    return text ?? undefined;
  }

  /** Candidate texts by id; with `holds`, a text without the pattern's literals is left out before it is decoded or tested. */
  private texts(source: Source, rows: readonly Record<string, SqlValue>[], holds: LiteralCheck | undefined, memo: BlobMemo): Map<number, string> {
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
    // The inline head of a large event is not read at all: its whole text comes from the blob.
    const inline: number[] = [];
    for (const r of rows) {
      if (typeof r.blob !== 'string') inline.push(Number(r.id));
      else {
        const text = this.blobText(r.blob, holds, memo);
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


/** The regex's first match in `text` and, when `counting`, how many matches it holds (up to MAX_COUNTED). */
function testText(re: RegExp, text: string, counting: boolean): Outcome {
  re.lastIndex = 0;
  const first = re.exec(text);
  if (!first) return null;
  let count = 1;
  if (counting) {
    if (first[0] === '') re.lastIndex++;
    while (count < MAX_COUNTED && re.exec(text)) count++;
  }
  return { index: first.index, length: first[0].length, count };
}

/** A hit's indexed text as snippets() reads it: a missing or NULL body is the empty text. */
function bodyOf(row: HitRow | undefined): string {
  const body = row?.body;
  return body === null || body === undefined ? '' : String(body);
}

function sources(scope: GrepScope): Source[] {
  return scope === 'messages' ? ['message'] : scope === 'summaries' ? ['summary'] : ['message', 'summary'];
}
