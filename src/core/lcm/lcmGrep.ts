import { HISTORY_FTS } from '../history/historySchema';
import { refuse, type Refusal } from '../refusal';
import { searchFts, type SearchRequest } from '../search/ftsSearch';
import { anyWordMatch, matchedExcerpts, partialOnly, partialProvablyEmpty, type MatchedHit } from '../search/partialMatches';
import { sortValue, topK, type SearchSort } from '../search/rank';
import type { Store } from '../store/store';
import { Conditions, queryArrays, queryRows, type SqlValue } from '../store/sqlite';
import { ReadAhead } from './blobReader';
import { BlobGrams, gramKeys, mayHold } from './blobGrams';
import { blockNarrowing, blocksHolding, inlineGramKeys } from './inlineGrams';
import { presentHits, type Excerpter, type Hit, type Source } from './grepMatches';
import { messageCandidates, summaryCandidates, type CandidateStatements, type Statement } from './grepCandidates';
import type { ConversationScope } from './conversations';
import { FtsVocabulary, termTest } from './ftsVocabulary';
import { literalCheck, regexSnippet, testText, type LiteralCheck, type Outcome } from './grepText';
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
  /** Blobs whose filter may hold the literals: read, not tested again. */
  passed: Set<string>;
  tested: Map<string, Tested>;
  /** The pattern's literals as keys of the blobs' trigram filters, when they can rule a blob out. */
  keys: Uint8Array[] | undefined;
}

/** How regex candidates were narrowed before the regex ran, reported so the cost is visible. */
export interface ScanStats {
  /** grams: the inline events of the blocks whose gram filter may hold the literals (inlineGrams.ts), then the substring check when there is one. */
  prefilter: 'fts' | 'vocabulary' | 'grams' | 'substring' | 'none';
  candidates: number;
  /** Candidates the regex ran on: those that hold the pattern's literals (when a plain search can tell). */
  scanned: number;
  bytesScanned: number;
  /** Large events' blobs opened and decoded; the others were ruled out by their trigram filter (or read earlier in the call). */
  blobsRead: number;
}

const FETCH_BATCH = 200;
/** The gram filter narrows inline events when at most this share of the blocks may hold the literal, or at most MIN_GRAM_LISTED blocks. */
const MAX_GRAM_SHARE = 0.5;
const MIN_GRAM_LISTED = 1024;

export interface LcmGrepOptions {
  /** A full pass reads its blobs on a worker thread from this many on (tests lower it to cover that path). */
  readAheadMin: number;
  /** A regex scan stops after this long, says so in its answer and returns what it found. */
  timeBoundMs: number;
  /** A regex scan gives the event loop a turn after this long, so the process answers other calls meanwhile. */
  sliceMs: number;
  /** Narrow inline events by their gram filter (tests turn it off to compare with the plain scan). */
  inlineGrams: boolean;
}

/** Why a regex scan ended before it had tested every candidate. */
export interface Stopped {
  reason: string;
  afterMs: number;
  timeBoundMs: number;
}

/**
 * A worker takes tens of milliseconds of CPU to start, which the scan's own thread competes with
 * on two busy cores. Measured on the 1 GB bench: 1,788 blobs to read ran ~30% faster with it,
 * 343 (a ~100 ms scan) ran slower.
 */
export const DEFAULT_GREP_OPTIONS: LcmGrepOptions = { readAheadMin: 1000, timeBoundMs: 20_000, sliceMs: 20, inlineGrams: true };

/** A turn of the event loop: other calls' messages are read and answered before the scan goes on. */
const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

export class LcmGrep {
  private readonly vocabulary = new FtsVocabulary();
  private readonly grams: BlobGrams;
  /** Regex scans run one at a time (they share the blob filters and the read-ahead worker); other calls are answered between their slices. */
  private scans: Promise<unknown> = Promise.resolve();
  /** The read-ahead worker's memory, reserved out of the store's budget while the worker lives (it may outlive the store by its idle minute). */
  private readonly workerHold = (bytes: number) => {
    if (!this.closed) this.store.reserveMemory('grep_read_ahead', bytes);
  };
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly options: LcmGrepOptions = DEFAULT_GREP_OPTIONS,
  ) {
    this.grams = new BlobGrams(store.home);
    store.onClose(() => {
      this.closed = true;
      this.grams.close();
    });
  }

  async grep(req: GrepRequest, scope: ConversationScope) {
    const hits = req.mode === 'full_text' ? this.fullText(req, scope) : await this.regexInTurn(req, scope);
    if ('ok' in hits) return hits;
    const stopped = 'stopped' in hits ? hits.stopped : undefined;
    return { ok: true as const, matches: this.present(hits.hits, 'excerpt' in hits ? hits.excerpt : undefined), count: hits.hits.length, truncated: hits.truncated, ...(hits.stats ? { scan: hits.stats } : {}), ...(stopped ? { stopped } : {}) };
  }

  private regexInTurn(req: GrepRequest, scope: ConversationScope) {
    const run = this.scans.then(() => this.regex(req, scope));
    this.scans = run.catch(() => undefined);
    return run;
  }

  /** The hits without their excerpts: those are made for the shown hits only, from the texts present() reads with their other fields. */
  private fullText(req: GrepRequest, scope: ConversationScope): { hits: Hit[]; truncated: boolean; excerpt: Excerpter; stats?: undefined } | Refusal {
    const syntax = regexSyntaxIn(req.pattern);
    if (syntax) {
      return refuse(`mode "full_text" searches words and "quoted phrases", not patterns, and this pattern holds ${syntax}. Use mode "regex" for a pattern, or write the words alone.`);
    }
    const db = this.store.db;
    const common = { query: req.pattern, limit: req.limit, sort: req.sort, since: req.since, before: req.before, now: this.store.now };
    const search = (source: Source, more: Partial<SearchRequest>) => {
      const table = source === 'message' ? HISTORY_FTS : LCM_SUMMARY_FTS;
      const r = { ...common, ...more };
      const narrow = scope.all ? {} : source === 'message' ? { filters: { session_id: scope.sessionId } } : { scope: scope.sessionId };
      return searchFts(db, table, { ...r, ...narrow });
    };
    const found: Hit[] = [];
    const matched = new Map<Source, { match: string; partialMatch?: string }>();
    let total = 0;
    for (const source of sources(req.scope)) {
      const r = search(source, {});
      if (!r.ok) return refuse(r.reason);
      total += r.total;
      matched.set(source, { match: r.match });
      for (const h of r.hits) found.push({ source, ranked: h, matched: 'all' });
    }
    const best = topK(found.map((f) => f.ranked), req.limit);
    // Fewer every-word hits than asked for: each source returned all it has, and the best
    // any-word matches of the rest fill up the list, after them (partialMatches.ts).
    const need = req.limit - best.length;
    const partial: Hit[] = [];
    const partialIds = new Map<Source, Set<number>>();
    if (need > 0) {
      for (const source of sources(req.scope)) {
        const table = source === 'message' ? HISTORY_FTS : LCM_SUMMARY_FTS;
        const anyWord = anyWordMatch(db, table, req.pattern, this.store.version);
        if (anyWord === undefined) continue;
        const { match } = anyWord;
        const strict = found.filter((f) => f.source === source).map((f) => f.ranked);
        // Fewer every-word hits than the limit: `strict` holds all of this source's (partialMatches.ts).
        if (partialProvablyEmpty(anyWord, strict.length)) {
          (matched.get(source) as { partialMatch?: string }).partialMatch = match;
          continue;
        }
        const r = search(source, { match, anyPhrase: true, docsWithPhrase: anyWord.counts });
        if (!r.ok) continue;
        const rest = partialOnly(r.hits, strict, need);
        total += r.total - strict.length;
        (matched.get(source) as { partialMatch?: string }).partialMatch = match;
        partialIds.set(source, new Set(rest.map((h) => h.docid)));
        for (const h of rest) partial.push({ source, ranked: h, matched: 'partial' });
      }
    }
    const bestPartial = topK(partial.map((f) => f.ranked), need);
    const bySource = new Map([...found, ...partial].map((f) => [f.ranked, f]));
    const excerpt: Excerpter = (source, texts) => {
      const m = matched.get(source);
      return m ? matchedExcerpts({ match: m.match, partialMatch: m.partialMatch, hits: [...texts.keys()].map((docid) => ({ docid, matched: partialIds.get(source)?.has(docid) ? 'partial' : 'all' }) as MatchedHit) }, texts, 24) : new Map();
    };
    const hits = [...best, ...bestPartial].map((r) => bySource.get(r) as Hit);
    return { hits, truncated: total > hits.length, excerpt };
  }

  private async regex(req: GrepRequest, scope: ConversationScope): Promise<{ hits: Hit[]; truncated: boolean; stats: Record<string, ScanStats>; stopped?: Stopped | undefined } | Refusal> {
    const compiled = compilePattern(req.pattern);
    if ('error' in compiled) return refuse(`pattern ${JSON.stringify(req.pattern.slice(0, 120))}: ${compiled.error}. Nothing was searched.`);
    const found: Hit[] = [];
    const stats: Record<string, ScanStats> = {};
    let truncated = false;
    const clock = new ScanClock(this.options);
    let stopped: Stopped | undefined;
    try {
      for (const source of sources(req.scope)) {
        const name = source === 'message' ? 'messages' : 'summaries';
        const r = await this.scan(source, compiled, req, scope, clock);
        found.push(...r.hits);
        stats[name] = r.stats;
        truncated ||= r.truncated;
        if (clock.expired) {
          stopped = clock.stopped(`the scan reached its time bound in ${name} after testing ${r.stats.scanned.toLocaleString('en-US')} of ${r.stats.candidates.toLocaleString('en-US')} candidates${source === 'message' && req.scope === 'both' ? '; summaries were not searched' : ''}: the matches are those found until then. A narrower pattern (a longer literal), since/before or one conversation finishes sooner`);
          truncated = true;
          break;
        }
      }
    } finally {
      compiled.regex.dispose();
    }
    const best = topK(found.map((f) => f.ranked), req.limit);
    const bySource = new Map(found.map((f) => [f.ranked, f]));
    return { hits: best.map((r) => bySource.get(r) as Hit), truncated: truncated || found.length > best.length, stats, stopped };
  }

  /**
   * Candidates are narrowed in SQLite — by the FTS index when the pattern's required literal
   * holds a whole word, by the index terms containing it when it lies inside words, else by
   * instr() on the stored text — then tested with the regex. Recency order reads them newest
   * first and stops at `limit` matches; relevance and hybrid read them all, in one pass.
   * Events whose full text lives in the blob store are always candidates: the index and the
   * inline text hold only their first part.
   */
  private async scan(source: Source, pattern: CompiledPattern, req: GrepRequest, scope: ConversationScope, clock: ScanClock) {
    const msg = source === 'message';
    const at = msg ? 'coalesce(e.created_at, s.updated_at, 0)' : 'coalesce(x.latest_at, x.created_at)';
    const where = new Conditions();
    if (!scope.all) where.add(msg ? 'e.session_id = ?' : 'x.session_id = ?', scope.sessionId);
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
    const memo: BlobMemo = { ruledOut: new Set(), passed: new Set(), tested: new Map(), keys: msg ? gramKeys(pattern) : undefined };
    if (msg) this.grams.refresh();
    const candidates = stopEarly
      ? this.newestFirst(source, statements.newestFirst, stats, holds, memo)
      : this.allInOnePass(statements.allInOnePass, stats, holds, memo);
    try {
      for (const { id, at: createdAt, text, blob, tested: known } of candidates) {
        if (clock.due()) {
          await pause();
          if (clock.expired) break;
        }
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
      if (msg) {
        this.grams.flush();
        this.store.reserveMemory('blob_filters', this.grams.heldBytes);
      }
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
    let substring: { sql: string; params: SqlValue[]; name: 'substring' } | undefined;
    if (!pattern.caseInsensitive) substring = { sql: `instr(${column}, ?) > 0`, params: [literal], name: 'substring' };
    // SQLite's lower() folds ASCII only, so only an ASCII literal can be narrowed case-insensitively.
    else if (/^[\x20-\x7e]+$/.test(literal) && !pattern.foldsBeyondAscii) {
      substring = { sql: `instr(lower(${column}), ?) > 0`, params: [literal.toLowerCase()], name: 'substring' };
    }
    const grams = msg ? this.gramPrefilter(pattern) : undefined;
    if (!grams) return substring;
    // The substring check stays: it is cheap on the rows the filter lets through, most of which hold the literal.
    return substring ? { sql: `${grams.sql} AND ${substring.sql}`, params: [...grams.params, ...substring.params], name: 'grams' } : grams;
  }

  /**
   * The inline events of the blocks whose gram filter may hold every literal, so only their rows
   * are read: the rest of the table, spread over the whole file, is not touched.
   */
  private gramPrefilter(pattern: CompiledPattern): { sql: string; params: SqlValue[]; name: 'grams' } | undefined {
    if (!this.options.inlineGrams) return undefined;
    const keys = inlineGramKeys(pattern);
    const found = keys && blocksHolding(this.store.db, keys);
    // The filters stay in memory for the next call (inlineGrams.ts): the chunk cache makes room.
    if (found) this.store.reserveMemory('inline_grams', found.held);
    // When most of many blocks may hold the literal, their rows are most of the table anyway, and
    // the list of their ids (64 a block) costs more to build than it saves.
    if (!found || found.blocks.length > Math.max(MIN_GRAM_LISTED, found.of * MAX_GRAM_SHARE)) return undefined;
    return { ...blockNarrowing(found), name: 'grams' };
  }

  /**
   * For a literal inside words (no whole word for the phrase above): the rows holding an index
   * term that contains it, found through the index's vocabulary, instead of a scan of every text.
   */
  private vocabularyPrefilter(source: Source, pattern: CompiledPattern): { sql: string; params: SqlValue[]; name: 'vocabulary' } | undefined {
    const test = pattern.literals.map((l) => termTest(l, pattern.foldsBeyondAscii)).find((t) => t !== undefined);
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
   * The large events are listed first, so that the blobs they need read can be read and decoded
   * on the second core (ReadAhead) while this thread scans the inline rows.
   */
  private *allInOnePass(statements: CandidateStatements['allInOnePass'], stats: ScanStats, holds: LiteralCheck | undefined, memo: BlobMemo): Generator<Candidate> {
    const large = statements.large ? queryArrays(this.store.db, statements.large.sql, statements.large.params) : [];
    const ahead = this.readAhead(large, memo);
    try {
      for (const { sql, params } of statements.texts) {
        // The scan pauses between candidates, and meanwhile a checkpoint (sql.js export) or a
        // compacted database taking over closes this statement: it is then run again, and the
        // rows already read are skipped.
        const read = new Set<number>();
        for (let done = false, runs = 0; !done; runs++) {
          if (runs > 100) throw new Error('lcm_grep: the candidates statement was closed 100 times during one scan');
          const stmt = this.store.db.prepare(sql);
          try {
            stmt.bind(params);
            for (;;) {
              let more: boolean;
              try {
                more = stmt.step();
              } catch (err) {
                if (String(err).includes('Statement closed')) break;
                throw err;
              }
              if (!more) {
                done = true;
                break;
              }
              const [id, at, text] = stmt.get();
              const n = Number(id);
              if (read.has(n)) continue;
              read.add(n);
              stats.candidates++;
              const t = String(text ?? '');
              if (holds && !holds.text(t)) continue;
              yield { id: n, at: Number(at), text: t };
            }
          } finally {
            stmt.free();
          }
        }
      }
      for (const [id, at, blob] of large) {
        stats.candidates++;
        if (typeof blob !== 'string') continue; // the statement lists only rows with a blob
        const tested = memo.tested.get(blob);
        if (tested) {
          yield { id: Number(id), at: Number(at), text: '', blob, tested };
          continue;
        }
        const text = this.blobText(blob, holds, memo, stats, ahead);
        if (text !== undefined) yield { id: Number(id), at: Number(at), text, blob };
      }
    } finally {
      ahead?.close();
    }
  }

  /**
   * The read-ahead of the blobs this pass will read, in the order it reads them: those neither
   * tested nor ruled out (by this call or their filter). Not worth a worker for a few.
   */
  private readAhead(large: readonly SqlValue[][], memo: BlobMemo): ReadAhead | undefined {
    if (memo.keys) {
      const untested = new Set<string>();
      for (const [, , blob] of large) if (typeof blob === 'string' && !memo.tested.has(blob) && !memo.ruledOut.has(blob) && !memo.passed.has(blob)) untested.add(blob);
      this.grams.test(untested, memo.keys, memo.ruledOut, memo.passed);
    }
    const listed = new Set<string>();
    for (const [, , blob] of large) {
      if (typeof blob === 'string' && !listed.has(blob) && !memo.tested.has(blob) && this.mayHold(blob, memo)) listed.add(blob);
    }
    if (listed.size < this.options.readAheadMin) return undefined;
    return ReadAhead.start([...listed], (hash) => this.store.blobs.compressedPathOf(hash), this.workerHold);
  }

  /** False when this call or the blob's filter already ruled it out. */
  private mayHold(hash: string, memo: BlobMemo): boolean {
    if (memo.ruledOut.has(hash)) return false;
    if (!memo.keys || memo.passed.has(hash)) return true;
    const filter = this.grams.get(hash);
    if (filter && !mayHold(filter, memo.keys)) {
      memo.ruledOut.add(hash);
      return false;
    }
    if (filter) memo.passed.add(hash);
    return true;
  }

  /**
   * A large event's whole text, or undefined when it lacks the pattern's literals. Most large
   * tool outputs lack them: the blob's trigram filter usually says so without the file being
   * opened, else its raw bytes are searched for them before they are decoded, and then neither
   * the decoding nor the regex runs.
   */
  private blobText(hash: string, holds: LiteralCheck | undefined, memo: BlobMemo, stats: ScanStats, ahead?: ReadAhead): string | undefined {
    if (!this.mayHold(hash, memo)) return undefined;
    const bytes = ahead?.take(hash) ?? this.store.blobs.get(hash);
    stats.blobsRead++;
    if (bytes) this.grams.add(hash, bytes);
    const decoded = holds?.bytes && bytes && !holds.bytes(bytes) ? null : (bytes?.toString('utf8') ?? '');
    const text = decoded !== null && holds && !holds.bytes && !holds.text(decoded) ? null : decoded;
    if (text === null) memo.ruledOut.add(hash);
    return text ?? undefined;
  }

  /** The shown fields of the hits, and for full text their excerpts (a method of its own so the bench's --diag can time it). */
  private present(hits: Hit[], excerpt?: Excerpter) {
    return presentHits(this.store.db, hits, excerpt);
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
}

function sources(scope: GrepScope): Source[] {
  return scope === 'messages' ? ['message'] : scope === 'summaries' ? ['summary'] : ['message', 'summary'];
}

/** A regex scan's time: when to give the event loop a turn, and whether the time bound is reached. */
class ScanClock {
  private readonly started = performance.now();
  private sliceStart = this.started;

  constructor(private readonly options: Pick<LcmGrepOptions, 'timeBoundMs' | 'sliceMs'>) {}

  /** True once per slice; the next slice starts now. */
  due(): boolean {
    const now = performance.now();
    if (now - this.sliceStart < this.options.sliceMs) return false;
    this.sliceStart = now;
    return true;
  }

  get expired(): boolean {
    return performance.now() - this.started >= this.options.timeBoundMs;
  }

  stopped(reason: string): Stopped {
    return { reason, afterMs: Math.round(performance.now() - this.started), timeBoundMs: this.options.timeBoundMs };
  }
}
