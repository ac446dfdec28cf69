import { refuse, type Refusal } from '../../refusal';
import type { NearestHit, NearestResult } from '../semantic/semanticService';
import type { Store } from '../../store/store';
import type { Database } from '../../store/sqlite';
import { scopeProblem } from '../scope';
import { memoryDoor } from '../../pool/door';
import { firstTokens } from '../../text/tokens';
import { ContextPacker, cachedTokens } from './contextPacker';
import { chunksByDocids, FactRows, historyOf, liveEntries, liveFacts, NoteRows, recentFacts, recentNotes, ruleFacts, withoutKey, type FactItem, type NoteCandidate, type NoteItem } from './contextRows';
import { keywordMatches, noteLimit, rankMemories, readAround, type KeywordMatches, type ReadAround } from './memoryRanking';
import { DocumentCounts } from './queryPruning';
import { asksPermission, contentWords, RULE_PREDICATES } from './queryWords';

export interface GetContextInput {
  query?: string | undefined;
  scope?: string | undefined;
  max_tokens?: number | undefined;
  include_history?: boolean | undefined;
}

export const MAX_TOKENS_DEFAULT = 800;
const SEMANTIC_OFF = { off: 'keyword ranking only; memory_status says why' };
/** Superseded values shown per fact with include_history; the rest are a retrieve_memory away. */
const HISTORY_PER_FACT = 5;
/** A note that does not fit whole is shown cut (and marked so) only when at least this much budget is left. */
const MIN_TOKENS_FOR_EXCERPT = 80;
const GIVE_UP_AFTER_MISSES = 6;
/** Rules that share no word with a permission question: the newest this many are candidates. */
const RULES_UNMATCHED = 50;
/**
 * get_context: current facts first (standing rules first of all when the request asks whether
 * something may be done), then the closest notes by the one scorer, packed into the token
 * budget by measuring. Without a query: a compact profile of current memory, newest first.
 */
export async function getContext(
  store: Store,
  index: () => { stale: boolean; changed_files: number },
  input: GetContextInput,
  counts = new DocumentCounts(),
  near?: Promise<NearestResult>,
): Promise<object | Refusal> {
  if (input.scope !== undefined) {
    const bad = scopeProblem(input.scope);
    if (bad) return refuse(bad);
  }
  const maxTokens = input.max_tokens ?? MAX_TOKENS_DEFAULT;
  const db = store.db;
  const words = input.query === undefined ? [] : contentWords(input.query);
  const lexical = words.length ? keywordMatches(db, store.version, store.now, words, input.scope, maxTokens, counts) : undefined;
  // Awaited after the keyword search, and after reading what ranking the keyword matches needs,
  // so the query's embedding in the worker overlaps both; a model that cannot answer leaves the
  // keyword ranking alone, and the reply says semantic recall was off.
  const read = lexical && near ? readAhead(db, lexical.hits.map((h) => h.docid)) : undefined;
  const semantic = lexical && near ? await near : undefined;
  const candidates = lexical ? byQuery(db, lexical, semantic?.ok ? semantic.hits : [], input.query as string, input.scope, maxTokens, read) : profile(db, input.scope);
  const indexState = index();
  const mode = words.length ? 'query' : 'profile';
  const door = memoryDoor(db, input.scope);

  const packer = new ContextPacker<FactItem, NoteItem>(maxTokens, (lists, budget, leftOut) => ({
    ok: true,
    mode,
    door,
    ...(input.query !== undefined && !words.length ? { note: 'the query has no searchable words; this is the current-memory profile' } : {}),
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    ...(candidates.rulesFirst ? { rules_first: true } : {}),
    // A fixed few tokens either way: a reason of any length could outgrow the smallest budget alone.
    ...(semantic ? { semantic: semantic.ok ? { model: semantic.model } : SEMANTIC_OFF } : {}),
    facts: lists.facts,
    notes: lists.notes,
    budget,
    left_out: { facts: leftOut.facts, notes: leftOut.notes, ...(candidates.unranked ? { unranked_matches: candidates.unranked } : {}) },
    index: indexState,
  }));
  let misses = 0;
  for (let i = 0; i < candidates.facts.length; i++) {
    // Past a run of misses the budget is spent: the rest are counted, not measured (nor read).
    if (misses >= GIVE_UP_AFTER_MISSES) {
      packer.leftOut.facts += candidates.facts.length - i;
      break;
    }
    const fact = candidates.facts.row(i);
    if (!fact) continue;
    if (!packer.add('facts', withoutKey(fact))) {
      misses++;
      continue;
    }
    misses = 0;
    if (input.include_history) for (const old of historyOf(db, fact, HISTORY_PER_FACT)) packer.add('facts', old);
  }
  // One note at most is cut to fit: after it the budget is spent, and measuring cuts is not free.
  let excerptTried = false;
  misses = 0;
  for (let i = 0; i < candidates.notes.length; i++) {
    if (misses >= GIVE_UP_AFTER_MISSES) {
      packer.leftOut.notes += candidates.notes.length - i;
      break;
    }
    const note = candidates.notes.row(i);
    if (!note) continue;
    if (packer.fits(note) || excerptTried || packer.remaining < MIN_TOKENS_FOR_EXCERPT) {
      misses = packer.add('notes', note) ? 0 : misses + 1;
      continue;
    }
    excerptTried = true;
    packer.add('notes', excerptThatFits(packer, note) ?? note);
  }
  return packer.finish().reply;
}

export interface Candidates {
  facts: FactRows;
  notes: NoteRows;
  rulesFirst: boolean;
  /** Matches beyond the ones ranked for this reply. */
  unranked: number;
}

/** What get_context reads of the keyword matches while the query is embedded: each row is read the same way whenever it is read. */
export interface ReadAhead {
  around: ReadAround;
  /** The live fact matches, id → predicate key. */
  facts: Map<string, string>;
  /** The live entry matches, id → scope. */
  entries: Map<string, string>;
  chunks: Map<number, NoteItem>;
}

export function readAhead(db: Database, docids: readonly number[]): ReadAhead {
  const around = readAround(db, docids);
  const refs = docids.map((docid) => ({ docid, ref: around.refs.get(docid) ?? '' }));
  return {
    around,
    facts: liveFacts(db, refs.filter((r) => r.ref.startsWith('fact:')).map((r) => r.ref.slice(5))),
    entries: liveEntries(db, refs.filter((r) => r.ref.startsWith('entry:')).map((r) => r.ref)),
    chunks: chunksByDocids(db, refs.filter((r) => r.ref.startsWith('note:')).map((r) => r.docid)),
  };
}

/** The rows of `keys` read ahead, and the others read now. */
function withRead<K, V>(held: ReadonlyMap<K, V> | undefined, keys: readonly K[], read: (missing: K[]) => Map<K, V>): Map<K, V> {
  const out = read(held ? keys.filter((k) => !held.has(k)) : [...keys]);
  if (held) for (const k of keys) if (held.has(k)) out.set(k, held.get(k) as V);
  return out;
}

export function byQuery(db: Database, lexical: KeywordMatches, semantic: readonly NearestHit[], query: string, scope: string | undefined, maxTokens: number, ahead?: ReadAhead): Candidates {
  const limit = noteLimit(maxTokens);
  // Facts are all kept (they lead the reply); notes beyond the limit could never be shown.
  const all = rankMemories(db, lexical.hits, semantic, true, ahead?.around);
  let notesSeen = 0;
  const ranked = all.filter((c) => c.ref.startsWith('fact:') || notesSeen++ < limit * 2);
  const rules = asksPermission(query);
  // A fact the ranking by meaning returned with a docid was read from its live, current row just
  // now (semanticCorpora's resolveKeys); its predicate is read only where rules are looked for.
  const liveByMeaning = new Set(rules ? [] : semantic.filter((h) => h.docid !== null && h.key.startsWith('fact:')).map((h) => h.key.slice(5)));
  const factRefs = ranked.filter((c) => c.ref.startsWith('fact:')).map((c) => c.ref.slice(5));
  const facts = withRead(ahead?.facts, factRefs.filter((id) => !liveByMeaning.has(id)), (ids) => liveFacts(db, ids));
  const entries = withRead(ahead?.entries, ranked.filter((c) => c.ref.startsWith('entry:')).map((c) => c.ref), (ids) => liveEntries(db, ids));
  const chunks = withRead(ahead?.chunks, ranked.filter((c) => c.ref.startsWith('note:')).map((c) => c.docid), (docids) => chunksByDocids(db, docids));
  const factIds: string[] = [];
  const notes: NoteCandidate[] = [];
  for (const c of ranked) {
    if (c.ref.startsWith('fact:') && (facts.has(c.ref.slice(5)) || liveByMeaning.has(c.ref.slice(5)))) factIds.push(c.ref.slice(5));
    const entryScope = c.ref.startsWith('entry:') ? entries.get(c.ref) : undefined;
    const chunk = entryScope === undefined && !c.ref.startsWith('entry:') ? chunks.get(c.docid) : undefined;
    const noteScope = entryScope ?? chunk?.scope;
    // A neighbour is read by its place in the file, not through the scoped search.
    if (noteScope !== undefined && (scope === undefined || noteScope === scope) && notes.length < limit) notes.push(chunk ? { item: chunk } : { entry: c.ref });
  }
  const unranked = lexical.unranked;
  const noteRows = new NoteRows(db, notes);
  if (!rules) return { facts: new FactRows(db, factIds), notes: noteRows, rulesFirst: false, unranked };
  // Rules that share the request's words lead (in the scorer's order), then the newest others.
  const matched = factIds.filter((id) => RULE_PREDICATES.includes(facts.get(id) as string));
  const seen = new Set(matched);
  const others = ruleFacts(db, scope, RULES_UNMATCHED).filter((f) => !seen.has(ledgerId(f)));
  const ruleIds = new Set([...matched, ...others.map(ledgerId)]);
  const order = [...matched, ...others.map(ledgerId), ...factIds.filter((id) => !ruleIds.has(id))];
  return { facts: new FactRows(db, order, new Map(others.map((f) => [ledgerId(f), f]))), notes: noteRows, rulesFirst: ruleIds.size > 0, unranked };
}

/** A fact's id in the ledger (the reply's id is `fact:<id>`). */
function ledgerId(f: FactItem): string {
  return f.id.slice('fact:'.length);
}

function profile(db: Database, scope: string | undefined): Candidates {
  const rules = ruleFacts(db, scope, 100);
  const ruleIds = new Set(rules.map((f) => f.id));
  const facts = [...rules, ...recentFacts(db, scope, 150).filter((f) => !ruleIds.has(f.id))];
  return { facts: new FactRows(db, facts.map(ledgerId), new Map(facts.map((f) => [ledgerId(f), f]))), notes: new NoteRows(db, recentNotes(db, scope, 60).map((item) => ({ item }))), rulesFirst: rules.length > 0, unranked: 0 };
}

/** The start of a note, cut on a token boundary so it fits what is left, marked as cut, with its full size. */
function excerptThatFits(packer: ContextPacker<FactItem, NoteItem>, note: NoteItem): NoteItem | undefined {
  if (packer.remaining < MIN_TOKENS_FOR_EXCERPT) return undefined;
  const fullTokens = cachedTokens(note.text);
  const frame = packer.cost({ ...note, text: '…', truncated: true, full_tokens: fullTokens });
  // JSON escaping and the joins can cost a token or two more than the prefix alone: each miss trims a little.
  for (let want = packer.remaining - frame - 2, attempt = 0; attempt < 4 && want >= 20; attempt++, want -= Math.max(4, Math.ceil(want * 0.03))) {
    const item: NoteItem = { ...note, text: `${firstTokens(note.text, want)}…`, truncated: true, full_tokens: fullTokens };
    if (packer.fits(item)) return item;
  }
  return undefined;
}
