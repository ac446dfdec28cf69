import { HISTORY_FTS } from '../history/historySchema';
import { refuse, type Refusal } from '../refusal';
import { searchFts, snippets, type SearchOutcome, type SearchRequest } from '../search/ftsSearch';
import { sortValue, topK, type Ranked, type SearchSort } from '../search/rank';
import type { Store } from '../store/store';
import { Conditions, queryRows, type Database, type SqlValue } from '../store/sqlite';
import { iso } from '../text/time';
import { conversationIds, type ConversationScope } from './conversations';
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

interface Hit {
  source: Source;
  ranked: Ranked;
  snippet?: string;
}

/** How regex candidates were narrowed before the regex ran, reported so the cost is visible. */
export interface ScanStats {
  prefilter: 'fts' | 'substring' | 'none';
  candidates: number;
  /** Candidates the regex ran on: those that hold the pattern's literals (when a plain search can tell). */
  scanned: number;
  bytesScanned: number;
}

const SNIPPET_CONTEXT = 80;
const FETCH_BATCH = 200;
/** In relevance order a regex match scores by how often it occurs, up to this many. */
const MAX_COUNTED = 1000;

export class LcmGrep {
  constructor(private readonly store: Store) {}

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
    const common = { query: req.pattern, limit: req.limit, sort: req.sort, since: req.since, before: req.before, now: this.store.now };
    const found: Hit[] = [];
    let total = 0;
    for (const source of sources(req.scope)) {
      const table = source === 'message' ? HISTORY_FTS : LCM_SUMMARY_FTS;
      const r =
        source === 'message'
          ? scope.all
            ? allMessages(db, common)
            : searchFts(db, table, { ...common, filters: { session_id: scope.sessionId } })
          : searchFts(db, table, { ...common, ...(scope.all ? {} : { scope: scope.sessionId }) });
      if (!r.ok) return refuse(r.reason);
      total += r.total;
      const excerpts = snippets(db, table, r.match, r.hits.map((h) => h.docid), 24, r.total);
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
   * holds a whole word, else by instr() on the stored text — then read newest first and tested
   * with the regex. Recency order stops at `limit` matches; relevance and hybrid read them all.
   * Events whose full text lives in the blob store are always candidates: the index and the
   * inline text hold only their first part.
   */
  private scan(source: Source, pattern: CompiledPattern, req: GrepRequest, scope: ConversationScope) {
    const db = this.store.db;
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
    const ids = queryRows(db, `SELECT ${msg ? 'e.id' : 'x.n'} AS id, ${at} AS at${msg ? ', e.blob AS blob' : ''} FROM ${from} WHERE ${where.sql} ORDER BY at DESC, id DESC`, where.params);
    const stats: ScanStats = { prefilter: prefilter?.name ?? 'none', candidates: ids.length, scanned: 0, bytesScanned: 0 };
    const hits: Hit[] = [];
    const now = this.store.now;
    const stopEarly = req.sort === 'recency';
    let truncated = false;
    const holds = literalCheck(pattern);
    outer: for (let i = 0; i < ids.length; i += FETCH_BATCH) {
      const batch = ids.slice(i, i + FETCH_BATCH);
      const texts = this.texts(source, batch, holds);
      for (const row of batch) {
        const id = Number(row.id);
        const text = texts.get(id);
        if (text === undefined) continue; // cannot hold the pattern's literals
        stats.scanned++;
        stats.bytesScanned += text.length;
        const re = pattern.regex;
        re.lastIndex = 0;
        const first = re.exec(text);
        if (!first) continue;
        if (stopEarly && hits.length >= req.limit) {
          truncated = true;
          break outer;
        }
        let count = 1;
        if (!stopEarly) {
          if (first[0] === '') re.lastIndex++;
          while (count < MAX_COUNTED && re.exec(text)) count++;
        }
        const createdAt = Number(row.at);
        hits.push({ source, ranked: { docid: id, bm25: count, createdAt, score: sortValue(req.sort, count, createdAt, now) }, snippet: regexSnippet(text, first.index, first[0].length) });
      }
    }
    return { hits, truncated, stats };
  }

  private prefilter(source: Source, pattern: CompiledPattern): { sql: string; params: SqlValue[]; name: 'fts' | 'substring' } | undefined {
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
    const column = msg ? 'e.text' : 'x.content';
    const literal = pattern.literals[0] as string;
    if (!pattern.caseInsensitive) return { sql: `(instr(${column}, ?) > 0${spill})`, params: [literal], name: 'substring' };
    // SQLite's lower() folds ASCII only, so only an ASCII literal can be narrowed case-insensitively.
    if (/^[\x20-\x7e]+$/.test(literal) && !pattern.regex.flags.includes('u')) {
      return { sql: `(instr(lower(${column}), ?) > 0${spill})`, params: [literal.toLowerCase()], name: 'substring' };
    }
    return undefined;
  }

  /** Candidate texts by id; with `holds`, a text without the pattern's literals is left out before it is decoded or tested. */
  private texts(source: Source, rows: readonly Record<string, SqlValue>[], holds?: LiteralCheck): Map<number, string> {
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
      if (typeof r.blob !== 'string') {
        inline.push(Number(r.id));
        continue;
      }
      const bytes = this.store.blobs.get(r.blob);
      // The literal's UTF-8 bytes are searched in the raw blob: most large tool outputs lack it,
      // and then neither the decoding nor the regex runs.
      if (!holds || !bytes || holds.bytes(bytes)) out.set(Number(r.id), bytes?.toString('utf8') ?? '');
    }
    if (!inline.length) return out;
    for (const r of queryRows(db, `SELECT id, text FROM events WHERE id IN (${inline.map(() => '?').join(',')})`, inline)) {
      const text = String(r.text ?? '');
      if (!holds || holds.text(text)) out.set(Number(r.id), text);
    }
    return out;
  }

  private present(hits: Hit[]): GrepMatch[] {
    const db = this.store.db;
    const msgIds = hits.filter((h) => h.source === 'message').map((h) => h.ranked.docid);
    const sumIds = hits.filter((h) => h.source === 'summary').map((h) => h.ranked.docid);
    const inList = (ids: number[]) => ids.map(() => '?').join(',') || 'NULL';
    const messages = new Map(queryRows(db, `SELECT e.id, e.session_id, e.kind, e.tool_name, src.summary_id FROM events e LEFT JOIN lcm_summary_sources src ON src.event_id = e.id WHERE e.id IN (${inList(msgIds)})`, msgIds).map((r) => [Number(r.id), r]));
    const summaries = new Map(queryRows(db, `SELECT n, id, session_id, depth, kind FROM lcm_summaries WHERE n IN (${inList(sumIds)})`, sumIds).map((r) => [Number(r.n), r]));
    const convs = conversationIds(db, [...messages.values(), ...summaries.values()].map((r) => String(r.session_id)));
    return hits.flatMap((h): GrepMatch[] => {
      const createdAt = iso(h.ranked.createdAt);
      if (h.source === 'message') {
        const r = messages.get(h.ranked.docid);
        if (!r) return [];
        const role = String(r.kind);
        return [{ id: h.ranked.docid, type: 'message', snippet: h.snippet ?? '', conversationId: convs.get(String(r.session_id)) ?? 0, createdAt, role, toolName: r.tool_name === null ? null : String(r.tool_name), coveredBy: r.summary_id === null ? null : String(r.summary_id) }];
      }
      const r = summaries.get(h.ranked.docid);
      if (!r) return [];
      const id = String(r.id);
      return [{ id, type: 'summary', snippet: h.snippet ?? '', conversationId: convs.get(String(r.session_id)) ?? 0, createdAt, depth: Number(r.depth), kind: String(r.kind), summaryId: id }];
    });
  }
}

/** Past this many excluded rows the scope filter runs instead (collecting their ids costs more than it saves). */
const EXCLUDED_MAX = 2_000;

/**
 * Full-text search of every conversation's messages, leaving out the excluded sources (Recollect's
 * own tool-call log). A filter on the scope column makes the scorer read every match's row, which
 * on a common word costs more than the search itself. The excluded rows are few, so their ids are
 * collected and the scorer drops them after scoring: scores do not depend on the filter (the
 * corpus statistics are the whole table's either way), so the result is exactly the filtered
 * search's, in one pass. That log holds the very words agents searched for, so over-fetching
 * and dropping afterwards would often need a second and third pass.
 */
function allMessages(db: Database, req: Omit<SearchRequest, 'filters' | 'excludeScopes'>): SearchOutcome {
  // Event ids are the index's docids; they come from the sessions' index entries, not from the rows.
  const ids = queryRows(
    db,
    `SELECT e.id FROM events e JOIN sessions s ON s.id = e.session_id WHERE s.source IN (${EXCLUDED_SOURCES.map(() => '?').join(',')}) LIMIT ?`,
    [...EXCLUDED_SOURCES, EXCLUDED_MAX + 1],
  );
  if (ids.length > EXCLUDED_MAX) return searchFts(db, HISTORY_FTS, { ...req, excludeScopes: EXCLUDED_SOURCES });
  return searchFts(db, HISTORY_FTS, ids.length ? { ...req, excludeDocids: new Set(ids.map((r) => Number(r.id))) } : req);
}

interface LiteralCheck {
  text(text: string): boolean;
  bytes(bytes: Buffer): boolean;
}

/**
 * Whether a text holds every literal a match must contain, or undefined when plain search
 * cannot tell. An indexOf is far cheaper than the regex on long texts that lack them, and on a
 * large event's raw bytes it also saves decoding them.
 */
function literalCheck(pattern: CompiledPattern): LiteralCheck | undefined {
  const literals = pattern.literals;
  if (!literals.length) return undefined;
  if (pattern.caseInsensitive) {
    // Without the u flag, /i folds an ASCII letter only with ASCII letters, so lower-cased text
    // keeps every match; read as latin1, UTF-8 bytes keep their ASCII bytes where they were and
    // no other byte lower-cases to ASCII. With u, /i also folds ſ and K into s and k: no check.
    if (pattern.regex.flags.includes('u') || !literals.every((l) => /^[\x00-\x7f]+$/.test(l))) return undefined;
    const lower = literals.map((l) => l.toLowerCase());
    const holds = (t: string) => {
      const folded = t.toLowerCase();
      return lower.every((l) => folded.includes(l));
    };
    return { text: holds, bytes: (bytes) => holds(bytes.toString('latin1')) };
  }
  const encoded = literals.map((l) => Buffer.from(l, 'utf8'));
  // A lone surrogate or U+FFFD has no exact byte form: decoding can produce U+FFFD from bytes
  // that never held it, so such literals are looked for in the decoded text only.
  const byBytes = encoded.every((b, i) => b.toString('utf8') === literals[i] && !literals[i]?.includes('\uFFFD'));
  return {
    text: (text) => literals.every((l) => text.includes(l)),
    bytes: (bytes) => !byBytes || encoded.every((l) => bytes.includes(l)),
  };
}

function sources(scope: GrepScope): Source[] {
  return scope === 'messages' ? ['message'] : scope === 'summaries' ? ['summary'] : ['message', 'summary'];
}

/** The match in [brackets] with some context either side, on one line. */
export function regexSnippet(text: string, index: number, length: number): string {
  const start = Math.max(0, index - SNIPPET_CONTEXT);
  const end = Math.min(text.length, index + length + SNIPPET_CONTEXT);
  const flat = (s: string) => s.replace(/\s+/g, ' ');
  const match = text.slice(index, index + length);
  const shown = match.length > 200 ? `${match.slice(0, 200)}…` : match;
  return `${start > 0 ? '…' : ''}${flat(text.slice(start, index))}[${flat(shown)}]${flat(text.slice(index + length, end))}${end < text.length ? '…' : ''}`;
}
