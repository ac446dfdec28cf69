import { FtsVarints } from '../search/ftsVarints';
import { queryRows, type Database } from '../store/sqlite';
import { lastAtOrBefore } from '../search/intList';

/**
 * Narrowing by the FTS4 vocabulary for a literal that holds no whole word ("OLLAMA" inside
 * getOllamaModel, "ocalhos", "ntries_c"): the index terms that contain it are found by reading
 * the terms of the index's own segments, and the index is then asked for the rows holding any
 * of them. The vocabulary is far smaller than the text, and the terms are read straight from
 * the segment leaves, skipping their doclists; fts4aux would decode every doclist to count it.
 */

/** How an index term must relate to the literal's letters and digits for a text holding the literal to hold the term. */
export interface TermTest {
  /** contains: the literal lies inside one token; suffix: it begins inside a token and ends it; prefix: it begins a token and ends inside it. */
  kind: 'contains' | 'suffix' | 'prefix';
  /** Folded (lower-case ASCII) letters and digits the term must contain, end with or start with. */
  part: string;
  /** prefix: a term that is a shorter prefix of `part` passes too (a stem cut inside the literal). */
  orShorter?: boolean;
}

/** Past this many terms the MATCH costs more than the scan it would save. */
export const MAX_TERMS = 500;

/**
 * Nor does it pay when the terms' doclists are this share of the whole index: a common
 * fragment ("tion" at 2% of the index, "ing" at 4%) is in a third of the rows, and the MATCH
 * then costs more than the scan it replaces (measured on the benchmark's 100 MB store, where
 * "err" at 0.6% still gained a third).
 */
export const MAX_DOCLIST_SHARE = 0.01;

/** One segment's terms as stored (UTF-8 read as latin1, so one byte is one character), each between newlines, with the size of each term's doclist. */
interface SegmentTerms {
  list: string;
  /** Where each term starts in `list`, ascending. */
  starts: Int32Array;
  doclistBytes: Int32Array;
  totalBytes: number;
}

/**
 * The term test a text holding `literal` passes, or undefined when none can be proven. Only
 * ASCII literals: the analyzer's words are then the runs of [A-Za-z0-9] around them (every
 * other ASCII character separates), folded to lower case, whatever non-ASCII letters a word
 * holds beside them. A word of letters only is stemmed, and its term is then a prefix of it
 * (src/core/text/analyzer.ts), which may end anywhere inside the literal: so a literal of
 * letters only inside or at the end of a word proves nothing, and one at a word's start
 * proves that the term begins with it or is one of its prefixes (`orShorter`). A literal with
 * a digit lies in a word that is kept whole. `foldsBeyondAscii` (the u and i flags together,
 * where ſ matches s and K matches k) rules it out, as it does the literal check.
 */
export function termTest(literal: string, foldsBeyondAscii: boolean): TermTest | undefined {
  if (foldsBeyondAscii || !/^[\x00-\x7f]+$/.test(literal)) return undefined;
  const lower = literal.toLowerCase();
  const run = /[a-z0-9]+/.exec(lower);
  if (!run) return undefined;
  const start = run.index;
  const end = start + run[0].length;
  const whole = /[0-9]/.test(run[0]);
  // A run that starts the literal may continue a longer word to its left; one that ends it may continue to its right.
  if (start === 0 && end === lower.length) return whole ? { kind: 'contains', part: run[0] } : undefined;
  if (start === 0) return whole ? { kind: 'suffix', part: run[0] } : undefined;
  if (end === lower.length) return { kind: 'prefix', part: run[0], ...(whole ? {} : { orShorter: true }) };
  return undefined; // a whole word: ftsPrefilter's phrase serves it
}

/** Cached term lists past this many bytes are not kept: a huge vocabulary is read afresh instead of held. */
const MAX_CACHED_BYTES = 64 * 1024 * 1024;

/**
 * The terms of each segment of an FTS4 index, kept between searches. FTS4 never changes a
 * segment once written (no automerge is configured): new rows go to new segments, and a merge
 * writes a new segment, at fresh block ids, before deleting the ones it merged. So a segment
 * is known by its %_segdir row — level, index, block range, size and root node — and its
 * terms are read from its leaves only the first time it is seen.
 */
export class FtsVocabulary {
  /**
   * Per index: lcm_grep's default call (scope both) reads the messages' index and then the
   * summaries', and one shared map let each drop the other's terms, so every call read the
   * messages' vocabulary afresh (~400 ms of a 1 GB store's full regex pass).
   */
  private readonly tables = new Map<string, { segments: Map<string, SegmentTerms>; bytes: number }>();

  /**
   * The index terms of `table` that pass `test`, as a MATCH expression (each term a quoted
   * phrase, OR'ed), '' when no term passes, or undefined when there are too many or too common
   * to help, or the index could not be read as expected (the caller then scans).
   */
  matchingTerms(db: Database, table: string, test: TermTest): string | undefined {
    // FTS4 keeps the terms of the last write in memory until the next savepoint or commit, and
    // the store's batch may still be open: an empty savepoint moves them into a segment, where
    // the reads below see them. It changes no row, only where the index keeps them.
    db.exec('SAVEPOINT lcm_vocabulary; RELEASE lcm_vocabulary');
    const lists = this.termLists(db, table);
    if (!lists) return undefined;
    const needle = test.kind === 'prefix' ? `\n${test.part}` : test.kind === 'suffix' ? `${test.part}\n` : test.part;
    const found = new Set<string>();
    const indexBytes = lists.reduce((n, l) => n + l.totalBytes, 0);
    let matchedBytes = 0;
    for (const { list, starts, doclistBytes } of lists) {
      for (let at = list.indexOf(needle); at >= 0; at = list.indexOf(needle, at + 1)) {
        const start = list.lastIndexOf('\n', test.kind === 'prefix' ? at : at - 1) + 1;
        const end = list.indexOf('\n', start);
        found.add(Buffer.from(list.slice(start, end), 'latin1').toString('utf8'));
        matchedBytes += doclistBytes[lastAtOrBefore(starts, start)] ?? 0;
        if (found.size > MAX_TERMS || matchedBytes > indexBytes * MAX_DOCLIST_SHARE) return undefined;
        at = end - 1; // on to the next term (a prefix's needle starts at the newline that ends this one)
      }
    }
    if (test.orShorter) {
      for (let k = 1; k < test.part.length; k++) {
        const needleK = `\n${test.part.slice(0, k)}\n`;
        for (const { list, starts, doclistBytes } of lists) {
          const at = list.indexOf(needleK);
          if (at < 0) continue;
          found.add(test.part.slice(0, k));
          matchedBytes += doclistBytes[lastAtOrBefore(starts, at + 1)] ?? 0;
        }
        if (found.size > MAX_TERMS || matchedBytes > indexBytes * MAX_DOCLIST_SHARE) return undefined;
      }
    }
    return [...found].map((t) => `"${t}"`).join(' OR ');
  }

  /** Every segment's term list, reading only the segments not seen before; undefined when a node does not parse. */
  private termLists(db: Database, table: string): SegmentTerms[] | undefined {
    const rows = queryRows(db, `SELECT level, idx, start_block, leaves_end_block, end_block, root FROM ${table}_segdir`);
    const cached = this.tables.get(table)?.segments;
    const next = new Map<string, SegmentTerms>();
    // The byte limit is over every index's cached terms together.
    let others = 0;
    for (const [t, c] of this.tables) if (t !== table) others += c.bytes;
    let bytes = others;
    const lists: SegmentTerms[] = [];
    for (const r of rows) {
      const root = r.root;
      if (!(root instanceof Uint8Array) || !root.length) return undefined;
      const key = `${table}|${String(r.level)}|${String(r.idx)}|${String(r.start_block)}|${String(r.leaves_end_block)}|${String(r.end_block)}|${Buffer.from(root).toString('latin1')}`;
      let list = cached?.get(key);
      if (list === undefined) {
        // A segment small enough is all in its root (a leaf, height 0); a larger one's leaves are
        // the blocks start_block..leaves_end_block, its root and the blocks after them interior nodes.
        const leaves = root[0] === 0 ? [root] : leafBlocks(db, table, Number(r.start_block), Number(r.leaves_end_block));
        const terms: string[] = [];
        const sizes: number[] = [];
        for (const leaf of leaves) {
          const parsed = leaf instanceof Uint8Array && eachTerm(leaf, (buf, len, doclist) => {
            terms.push(Buffer.from(buf.subarray(0, len)).toString('latin1'));
            sizes.push(doclist);
            return true;
          });
          if (!parsed) return undefined;
        }
        const starts = new Int32Array(terms.length);
        for (let i = 0, at = 1; i < terms.length; at += (terms[i] as string).length + 1, i++) starts[i] = at;
        list = { list: `\n${terms.join('\n')}\n`, starts, doclistBytes: Int32Array.from(sizes), totalBytes: sizes.reduce((a, b) => a + b, 0) };
      }
      lists.push(list);
      const size = list.list.length + 8 * list.starts.length;
      if (bytes + size <= MAX_CACHED_BYTES) {
        next.set(key, list);
        bytes += size;
      }
    }
    this.tables.set(table, { segments: next, bytes: bytes - others }); // segments merged away are forgotten
    return lists;
  }
}

function leafBlocks(db: Database, table: string, first: number, last: number): unknown[] {
  return queryRows(db, `SELECT block FROM ${table}_segments WHERE blockid BETWEEN ? AND ? ORDER BY blockid`, [first, last]).map((r) => r.block);
}

let term = new Uint8Array(256);

/**
 * Calls `each` with every term of an FTS4 leaf node (height 0, then the first term whole and
 * each further one as a prefix length shared with the one before plus the rest, each followed
 * by its doclist, skipped by its length, which `each` is told). False when `each` stops or the node does not parse.
 */
function eachTerm(node: Uint8Array, each: (buf: Uint8Array, len: number, doclistBytes: number) => boolean): boolean {
  const varints = new FtsVarints(node);
  if (varints.next() !== 0) return false;
  let len = 0;
  let first = true;
  while (varints.at < node.length) {
    const prefix = first ? 0 : varints.next();
    const suffix = varints.next();
    if (prefix < 0 || suffix < 0 || prefix > len || varints.at + suffix > node.length) return false;
    if (prefix + suffix > term.length) {
      const bigger = new Uint8Array(Math.max(term.length * 2, prefix + suffix));
      bigger.set(term.subarray(0, prefix));
      term = bigger;
    }
    term.set(node.subarray(varints.at, varints.at + suffix), prefix);
    len = prefix + suffix;
    varints.at += suffix;
    const doclist = varints.next();
    if (doclist < 0 || varints.at + doclist > node.length) return false;
    varints.at += doclist;
    first = false;
    if (!each(term, len, doclist)) return false;
  }
  return true;
}
