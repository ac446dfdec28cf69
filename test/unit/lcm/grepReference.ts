import { compilePattern, type CompiledPattern } from '../../../src/core/lcm/regexPattern';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';

/** lcm_grep's regex answers found the slow way, every full text read and tested: what the tool must equal. */

/** Every message or summary the regex matches, found the slow way: each full text read and tested. */
export function bruteForce(s: Services, pattern: RegExp, what: 'messages' | 'summaries'): Set<number | string> {
  const found = new Set<number | string>();
  if (what === 'messages') {
    for (const r of queryRows(s.store.db, 'SELECT e.id, e.text, e.blob FROM events e')) {
      const text = typeof r.blob === 'string' ? s.store.blobs.get(r.blob)!.toString('utf8') : String(r.text);
      if (new RegExp(pattern.source, pattern.flags).test(text)) found.add(Number(r.id));
    }
  } else {
    for (const r of queryRows(s.store.db, 'SELECT id, content FROM lcm_summaries')) if (new RegExp(pattern.source, pattern.flags).test(String(r.content))) found.add(String(r.id));
  }
  return found;
}

/**
 * The same search in relevance order, the slow way: every match counted (up to 1,000 per text,
 * as the tool caps them), most first, then newest, then the higher id.
 */
export function bruteRanked(s: Services, pattern: RegExp, what: 'messages' | 'summaries'): (number | string)[] {
  const rows = what === 'messages'
    ? queryRows(s.store.db, 'SELECT e.id AS id, e.id AS n, coalesce(e.created_at, x.updated_at, 0) AS at, e.text, e.blob FROM events e JOIN sessions x ON x.id = e.session_id')
    : queryRows(s.store.db, 'SELECT id, n, coalesce(latest_at, created_at) AS at, content AS text FROM lcm_summaries');
  const global = new RegExp(pattern.source, `${pattern.flags}g`);
  return rows
    .map((r) => {
      const text = typeof r.blob === 'string' ? s.store.blobs.get(r.blob)!.toString('utf8') : String(r.text);
      return { id: what === 'messages' ? Number(r.id) : String(r.id), n: Number(r.n), at: Number(r.at), count: Math.min(1000, text.match(global)?.length ?? 0) };
    })
    .filter((r) => r.count > 0)
    .sort((a, b) => b.count - a.count || b.at - a.at || b.n - a.n)
    .map((r) => r.id);
}

/**
 * lcm_grep patterns (as a caller writes them) with the JavaScript regex a brute-force scan uses:
 * literals inside words, an /i literal, classes with and without a literal, and one common word,
 * so both the blob filters and the checks on raw bytes are reached.
 */
export const BLOB_PATTERN_CASES: readonly [string, RegExp][] = [
  ['ntriesCoun', /ntriesCoun/],
  ['/"UNPROCESSEDENTRIESCOUNT": [0-9]/i', /"UNPROCESSEDENTRIESCOUNT": [0-9]/i],
  ['"[a-z]+Count": [0-9]+', /"[a-z]+Count": [0-9]+/],
  ['[0-9]{4}-[0-9]{2}-[0-9]{2}', /[0-9]{4}-[0-9]{2}-[0-9]{2}/],
  ['function', /function/],
];

const recent = new Map<string, CompiledPattern>();

/**
 * A compiled pattern for a test, failing loudly on a pattern that does not compile. RE2's fixed
 * heap holds only so many compiled patterns, so the 16 most recently asked for are kept and
 * older ones disposed: a test uses what it asked for right away.
 */
export function compiled(p: string): CompiledPattern {
  const known = recent.get(p);
  if (known) {
    recent.delete(p);
    recent.set(p, known);
    return known;
  }
  const c = compilePattern(p);
  if ('error' in c) throw new Error(c.error);
  recent.set(p, c);
  for (const [key, old] of recent) {
    if (recent.size <= 16) break;
    old.regex.dispose();
    recent.delete(key);
  }
  return c;
}

/** A small deterministic generator (xorshift), so a failure on random input is reproducible. */
export function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/**
 * Classic catastrophic-backtracking patterns (issue 21, item 6): the first five hung
 * JavaScript's engine for more than 30 s on a few thousand characters. Each text is the one
 * that provokes its pattern: a long run that almost matches.
 */
export const REDOS_CASES: readonly [pattern: string, text: string][] = [
  ['(a|a)*$', `${'a'.repeat(5000)}!`],
  ['(a|aa)+$', `${'a'.repeat(5000)}!`],
  ['(\\w|a)*$', `${'a'.repeat(5000)}!`],
  ['(a?){30}a{30}$', `${'a'.repeat(5000)}!`],
  ['.*.*.*.*.*.*=', 'a'.repeat(5000)],
  ['(a+)+$', `${'a'.repeat(5000)}!`],
  ['(a*)*$', `${'a'.repeat(5000)}!`],
  ['([a-zA-Z]+)*$', `${'a'.repeat(5000)}!`],
  ['(.*a){20}', 'a'.repeat(5000)],
  ['^(a+)+b', 'a'.repeat(5000)],
  ['(x+x+)+y', 'x'.repeat(5000)],
  ['(\\d+)*$', `${'1'.repeat(5000)}!`],
  ['((a+)|(b+))*c', 'ab'.repeat(2500)],
  ['^(([a-z])+.)+[A-Z]([a-z])+$', `${'a'.repeat(5000)}!`],
];
