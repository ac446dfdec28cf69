import { HISTORY_FTS } from '../history/historySchema';
import { searchFts } from '../search/ftsSearch';
import type { Store } from '../store/store';
import { queryRows } from '../store/sqlite';
import { iso } from '../text/time';
import { countTokens } from '../text/tokens';
import type { LcmReads } from './lcmReads';

/** One conversation's share of an lcm_expand_query: the summaries and messages the search found there. */
export interface Bucket {
  sessionId: string;
  conversationId: number;
  title: string | null;
  score: number;
  summaryIds: string[];
  messageIds: number[];
}

export interface ExcerptAnswer {
  text: string;
  citedIds: string[];
  citedMessageIds: number[];
  expandedSummaryCount: number;
  sourceTokens: number;
  /** Matching excerpts that did not fit maxTokens. */
  leftOut: number;
}

export const NO_MODEL_NOTE = 'No language model synthesised this answer: it is assembled from the source excerpts that best match the question, quoted verbatim with the ids they come from.';

const WINDOW = 320;
const MAX_WORD_PASSES = 8;
const STOPWORDS = new Set('a an and are as at be but by did do does for from had has have how i if in is it its of on or so that the their them then there these this to was we were what when where which who why will with you your'.split(' '));

interface Candidate {
  id: number;
  leafId: string | null;
  role: string;
  toolName: string | null;
  at: number | null;
  text: string;
  score: number;
}

/**
 * The answer without a model: walk the bucket's summaries down to their source messages, rank
 * those with the one scorer (the question as a whole first, then its words one by one), and
 * quote the best windows until maxTokens is reached.
 */
export function excerptAnswer(store: Store, reads: LcmReads, input: { prompt: string; query?: string | undefined; bucket: Bucket; maxTokens: number; withNote: boolean }): ExcerptAnswer {
  const { bucket } = input;
  const visited = new Set<string>(bucket.summaryIds);
  const candidates = new Map<number, Candidate>();
  for (const seed of bucket.summaryIds) {
    for (const leaf of reads.leavesUnder(seed)) {
      visited.add(leaf);
      for (const m of reads.sources(leaf)) candidates.set(m.id, { id: m.id, leafId: leaf, role: m.role, toolName: m.toolName, at: m.createdAt ? Date.parse(m.createdAt) : null, text: m.text, score: 0 });
    }
  }
  for (const m of messagesById(store, reads, bucket.messageIds)) if (!candidates.has(m.id)) candidates.set(m.id, m);

  const terms = searchTerms(input.query, input.prompt);
  score(store, bucket.sessionId, [input.query ?? input.prompt, ...terms.slice(0, MAX_WORD_PASSES)], candidates);
  const ranked = [...candidates.values()].filter((c) => c.score > 0).sort((a, b) => b.score - a.score || a.id - b.id);

  const lines: string[] = [];
  const header = input.withNote ? `${NO_MODEL_NOTE}\n` : '';
  let used = countTokens(header);
  const cited = new Set<string>();
  const citedMessages: number[] = [];
  let sourceTokens = 0;
  let leftOut = 0;
  /** Takes the line when it fits what is left of the budget (its cost), else counts it as left out. */
  const take = (line: string): number | undefined => {
    const cost = countTokens(line) + 1;
    if (used + cost > input.maxTokens) {
      leftOut++;
      return undefined;
    }
    used += cost;
    lines.push(line);
    return cost;
  };
  for (const c of ranked) {
    const cost = take(`- [${c.leafId ? `${c.leafId} · ` : ''}msg ${c.id} · ${c.role}${c.toolName ? ` ${c.toolName}` : ''}${c.at !== null ? ` · ${iso(c.at)}` : ''}] ${window(c.text, terms)}`);
    if (cost === undefined) continue;
    sourceTokens += cost;
    if (c.leafId) cited.add(c.leafId);
    citedMessages.push(c.id);
  }
  if (!lines.length) {
    // Nothing in the sources matched the words: the summaries themselves are the best excerpts there are.
    for (const id of bucket.summaryIds) {
      const s = reads.summary(id);
      if (!s) continue;
      if (take(`- [${s.id} · summary, depth ${s.depth}] ${s.content.replace(/\s+/g, ' ')}`) === undefined) continue;
      sourceTokens += s.tokens;
      cited.add(s.id);
    }
  }
  const body = lines.length ? lines.join('\n') : '(no source message in this conversation matches the question)';
  return { text: `${header}${body}`, citedIds: [...cited], citedMessageIds: citedMessages, expandedSummaryCount: visited.size, sourceTokens, leftOut };
}

/** Words worth searching for on their own: not stopwords, at least three characters, each once. */
export function searchTerms(query: string | undefined, prompt: string): string[] {
  const words = `${query ?? ''} ${prompt}`.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? [];
  return [...new Set(words.filter((w) => !STOPWORDS.has(w)))];
}

function score(store: Store, sessionId: string, queries: string[], candidates: Map<number, Candidate>): void {
  const db = store.db;
  queries.forEach((q, i) => {
    const r = searchFts(db, HISTORY_FTS, { query: q, limit: 500, sort: 'relevance', now: store.now, filters: { session_id: sessionId } });
    if (!r.ok) return;
    // The whole question counts double: a message matching all of it beats one matching a word.
    for (const h of r.hits) {
      const c = candidates.get(h.docid);
      if (c) c.score += i === 0 ? 2 * h.bm25 + 1 : h.bm25;
    }
  });
}

function messagesById(store: Store, reads: LcmReads, ids: number[]): Candidate[] {
  if (!ids.length) return [];
  return queryRows(store.db, `SELECT id, kind, tool_name, created_at, text, blob FROM events WHERE id IN (${ids.map(() => '?').join(',')})`, ids).map((r) => ({
    id: Number(r.id), leafId: null, role: String(r.kind), toolName: r.tool_name === null ? null : String(r.tool_name),
    at: r.created_at === null ? null : Number(r.created_at), text: reads.fullText(r.text, r.blob), score: 0,
  }));
}

/** The part of a message around the first term it contains, verbatim apart from folded whitespace. */
function window(text: string, terms: string[]): string {
  const lower = text.toLowerCase();
  const at = terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0).sort((a, b) => a - b)[0] ?? 0;
  const start = Math.max(0, at - WINDOW / 2);
  const end = Math.min(text.length, start + WINDOW * 2);
  return `${start > 0 ? '…' : ''}${text.slice(start, end).replace(/\s+/g, ' ').trim()}${end < text.length ? '…' : ''}`;
}
