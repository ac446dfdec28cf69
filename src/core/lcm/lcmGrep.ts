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
      const excerpts = snippets(db, table, r.match, r.hits.map((h) => h.docid), 24);
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
    outer: for (let i = 0; i < ids.length; i += FETCH_BATCH) {
      const batch = ids.slice(i, i + FETCH_BATCH);
      const texts = this.texts(source, batch);
      for (const row of batch) {
        const id = Number(row.id);
        const text = texts.get(id) ?? '';
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
      return { sql: `(${msg ? 'e.id' : 'x.n'} IN (SELECT docid FROM ${table} WHERE ${table} MATCH ?)${spill})`, params: [match], name: 'fts' };
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

  private texts(source: Source, rows: readonly Record<string, SqlValue>[]): Map<number, string> {
    const db = this.store.db;
    const out = new Map<number, string>();
    if (source === 'summary') {
      const ids = rows.map((r) => Number(r.id));
      for (const r of queryRows(db, `SELECT n, content FROM lcm_summaries WHERE n IN (${ids.map(() => '?').join(',')})`, ids)) out.set(Number(r.n), String(r.content));
      return out;
    }
    // The inline head of a large event is not read at all: its whole text comes from the blob.
    const inline: number[] = [];
    for (const r of rows) {
      if (typeof r.blob !== 'string') {
        inline.push(Number(r.id));
        continue;
      }
      out.set(Number(r.id), this.store.blobs.get(r.blob)?.toString('utf8') ?? '');
    }
    if (!inline.length) return out;
    for (const r of queryRows(db, `SELECT id, text FROM events WHERE id IN (${inline.map(() => '?').join(',')})`, inline)) out.set(Number(r.id), String(r.text ?? ''));
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
/** The first over-fetch: enough when few excluded rows rank near the top, as is usual. */
const FIRST_OVERFETCH = 32;

/**
 * Full-text search of every conversation's messages, leaving out the excluded sources (Recollect's
 * own tool-call log). A filter on the scope column makes the scorer read every match's row, which
 * on a common word costs more than the search itself. The excluded rows are few, so instead the
 * search runs unfiltered for a few more than `limit` and they are dropped afterwards: scores do
 * not depend on the filter (the corpus statistics are the whole table's either way) and the order
 * is total, so the first `limit` rows left are exactly the filtered search's. When too few are
 * left, it runs again over-fetching by every excluded row, which always suffices. Relevance
 * only: the other sorts read every match's date anyway, and a time bound is a filter of its own.
 */
function allMessages(db: Database, req: Omit<SearchRequest, 'filters' | 'excludeScopes'>): SearchOutcome {
  const filtered = () => searchFts(db, HISTORY_FTS, { ...req, excludeScopes: EXCLUDED_SOURCES });
  if ((req.sort ?? 'relevance') !== 'relevance' || req.since !== undefined || req.before !== undefined || req.scope !== undefined) return filtered();
  // Event ids are the index's docids; they come from the sessions' index entries, not from the rows.
  const ids = queryRows(
    db,
    `SELECT e.id FROM events e JOIN sessions s ON s.id = e.session_id WHERE s.source IN (${EXCLUDED_SOURCES.map(() => '?').join(',')}) LIMIT ?`,
    [...EXCLUDED_SOURCES, EXCLUDED_MAX + 1],
  );
  if (ids.length > EXCLUDED_MAX) return filtered();
  const excluded = new Set(ids.map((r) => Number(r.id)));
  const run = (extra: number) => {
    const r = searchFts(db, HISTORY_FTS, { ...req, limit: req.limit + extra });
    if (!r.ok) return r;
    const kept = r.hits.filter((h) => !excluded.has(h.docid));
    // Every match fetched: the count is exact. Otherwise the count is only known to exceed
    // `limit` (more than `limit` kept, or more left than there are excluded rows), which is all
    // `truncated` needs; with `limit` kept and no such proof, the next run decides.
    if (r.total <= r.hits.length) return { ...r, hits: kept.slice(0, req.limit), total: kept.length };
    const moreThanLimit = kept.length > req.limit || (kept.length === req.limit && r.total - excluded.size > req.limit);
    return moreThanLimit ? { ...r, hits: kept.slice(0, req.limit), total: r.total - (r.hits.length - kept.length) } : undefined;
  };
  if (!excluded.size) return searchFts(db, HISTORY_FTS, req);
  return (excluded.size > FIRST_OVERFETCH ? run(FIRST_OVERFETCH) : undefined) ?? run(excluded.size) ?? filtered();
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
