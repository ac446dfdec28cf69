import { refuse, type Refusal } from '../refusal';
import { searchFts, type SearchOutcome } from '../search/ftsSearch';
import type { SearchSort } from '../search/rank';
import type { Store } from '../store/store';
import { queryRows } from '../store/sqlite';
import { iso } from '../text/time';
import { countTokens } from '../text/tokens';
import { CHAPTERS_FTS, type ArchiveKind } from './chaptersSchema';
import { recordsDoor } from '../pool/door';

export const SEARCH_DEFAULT_BUDGET = 400;
/** Candidates ranked before packing; packing, not this, decides how many are shown. */
const CANDIDATES = 50;

export interface ArchiveSearchInput {
  query: string;
  kind?: ArchiveKind | undefined;
  budget?: number | undefined;
  sort?: SearchSort | undefined;
}

export interface ArchiveHit {
  score: number;
  date: string;
  kind: ArchiveKind;
  title: string;
  path: string;
  topics: string[];
  /** The ref chapters_artifact opens. */
  id: string;
}

/**
 * Ranked, token-bounded hits over archived chapters and plans through the one scorer. Every word
 * must match first; when nothing holds them all, the same scorer ranks by any of them and the
 * note says so. Hits are packed best first while the list and the packed line fit the budget.
 */
export function searchArchive(store: Store, input: ArchiveSearchInput) {
  const budget = input.budget ?? SEARCH_DEFAULT_BUDGET;
  const base = { query: input.query, limit: CANDIDATES, sort: input.sort ?? 'relevance', scope: input.kind, now: store.now };
  let found: SearchOutcome = searchFts(store.db, CHAPTERS_FTS, base);
  let anyWord = false;
  if (found.ok && found.total === 0) {
    found = searchFts(store.db, CHAPTERS_FTS, { ...base, anyPhrase: true });
    anyWord = found.ok && found.total > 0;
  }
  if (!found.ok) return refuse(found.reason);
  const scopes = new Map<string, string>();
  const hits = describe(store, found.hits, scopes);
  const packed = pack(hits, budget);
  // Team chapters came (or went) through the pool; the others are this machine's own.
  const door = recordsDoor(store.db, packed.kept.map((h) => scopes.get(h.id) ?? 'global'));
  const notes = [`answered by ${door}`];
  if (anyWord) notes.push('no archived chapter or plan holds every word, so these are ranked by the words they do hold');
  if (packed.kept.length < hits.length) notes.push(`trimmed to the ${budget}-token budget: ${packed.kept.length} of ${found.total} shown; ask with a larger budget or a narrower query for more`);
  else if (found.total > hits.length) notes.push(`the best ${hits.length} of ${found.total} matches were ranked`);
  return {
    ok: true as const,
    door,
    results: packed.kept,
    total: found.total,
    shown: packed.kept.length,
    budget: { requested: budget, used: packed.used, remaining: budget - packed.used },
    note: `${notes.join('; ')}.`,
    line: packed.line,
  };
}

/** The hits, with each one's scope put in `scopes` (by id) for the door. */
function describe(store: Store, hits: readonly { docid: number; score: number; createdAt: number }[], scopes: Map<string, string>): ArchiveHit[] {
  if (!hits.length) return [];
  const docs = new Map(
    queryRows(store.db, `SELECT docid, scope, ref FROM ${CHAPTERS_FTS} WHERE docid IN (${hits.map(() => '?').join(',')})`, hits.map((h) => h.docid)).map((r) => [Number(r.docid), r]),
  );
  const out: ArchiveHit[] = [];
  for (const h of hits) {
    const doc = docs.get(h.docid);
    if (!doc) continue;
    const kind = String(doc.scope) as ArchiveKind;
    const ref = String(doc.ref);
    const row =
      kind === 'plan'
        ? queryRows(store.db, "SELECT p.title || ' (' || p.status || ')' AS title, p.sha256, p.tool_name, p.scope, c.topics FROM chapter_plans p LEFT JOIN chapters c ON c.id = p.chapter_id WHERE p.id = ?", [ref])[0]
        : queryRows(store.db, 'SELECT title, sha256, topics, scope FROM chapters WHERE id = ?', [ref])[0];
    if (!row) continue;
    scopes.set(ref, String(row.scope));
    const topics = JSON.parse(String(row.topics ?? '[]')) as string[];
    out.push({
      score: Number(h.score.toPrecision(4)),
      date: iso(h.createdAt),
      kind,
      title: String(row.title),
      path: store.blobs.pathOf(String(row.sha256)),
      topics: kind === 'plan' ? [String(row.tool_name), ...topics.slice(0, 3)] : topics,
      id: ref,
    });
  }
  return out;
}

function lineOf(h: ArchiveHit, i: number): string {
  return `${i + 1}. [${h.kind}] ${h.title} — ${h.date.slice(0, 10)} — score ${h.score} — ${h.topics.join(', ')} — ${h.id}`;
}

function pack(hits: readonly ArchiveHit[], budget: number): { kept: ArchiveHit[]; used: number; line: string } {
  const kept: ArchiveHit[] = [];
  const measure = (list: ArchiveHit[]) => {
    const line = list.map(lineOf).join('\n');
    return { line, used: countTokens(line) + countTokens(JSON.stringify(list)) };
  };
  let current = measure(kept);
  for (const h of hits) {
    const next = measure([...kept, h]);
    if (next.used > budget) break;
    kept.push(h);
    current = next;
  }
  return { kept, used: current.used, line: current.line };
}

export type ArchiveSearchResult = ReturnType<typeof searchArchive> | Refusal;
