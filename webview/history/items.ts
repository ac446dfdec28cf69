import type { ChapterSpan, Row } from '../shared/historyProtocol';

/**
 * Row heights are fixed per kind and state, so the virtual list knows every offset without
 * measuring: a message shows three clamped lines, reasoning and tool calls one line, and an
 * opened row a fixed-height box that scrolls on its own. Keep in step with history.css.
 */
export const HEIGHT = {
  chapter: 46,
  message: 92,
  compact: 30,
  open: 372,
} as const;

export type Item =
  | { type: 'chapter'; key: string; chapter: ChapterSpan; collapsed: boolean; rows: number }
  | { type: 'row'; key: string; row: Row; open: boolean; inChapter: boolean };

export function isCompact(row: Row): boolean {
  return row.kind !== 'user' && row.kind !== 'assistant';
}

export function heightOf(item: Item): number {
  if (item.type === 'chapter') return HEIGHT.chapter;
  if (item.open) return HEIGHT.open;
  return isCompact(item.row) ? HEIGHT.compact : HEIGHT.message;
}

/**
 * The list the panel scrolls: rows in seq order with a header where each chapter starts. A
 * collapsed chapter hides its rows and the chapters nested in it; chapters may overlap (a fork
 * from a row archives a shorter span again), so each is placed by its own start.
 */
export function buildItems(rows: readonly Row[], chapters: readonly ChapterSpan[], collapsed: ReadonlySet<string>, open: ReadonlySet<number>): Item[] {
  const spans = [...chapters].sort((a, b) => a.startSeq - b.startSeq || b.endSeq - a.endSeq);
  const seqs = rows.map((r) => r.seq);
  const items: Item[] = [];
  let next = 0;
  let hiddenTo = 0;
  let coveredTo = 0;
  const emitChapter = (c: ChapterSpan) => {
    if (c.endSeq <= hiddenTo) return;
    const isCollapsed = collapsed.has(c.id);
    items.push({ type: 'chapter', key: `c:${c.id}`, chapter: c, collapsed: isCollapsed, rows: countBetween(seqs, c.startSeq, c.endSeq) });
    coveredTo = Math.max(coveredTo, c.endSeq);
    if (isCollapsed) hiddenTo = Math.max(hiddenTo, c.endSeq);
  };
  for (const row of rows) {
    while (next < spans.length && (spans[next] as ChapterSpan).startSeq <= row.seq) emitChapter(spans[next++] as ChapterSpan);
    if (row.seq <= hiddenTo) continue;
    items.push({ type: 'row', key: `r:${row.seq}`, row, open: open.has(row.seq), inChapter: row.seq <= coveredTo });
  }
  while (next < spans.length) emitChapter(spans[next++] as ChapterSpan);
  return items;
}

/** Prefix sums: offsets[i] is where item i starts; offsets[items.length] is the whole height. */
export function offsetsOf(items: readonly Item[]): Float64Array {
  const out = new Float64Array(items.length + 1);
  for (let i = 0; i < items.length; i++) out[i + 1] = (out[i] as number) + heightOf(items[i] as Item);
  return out;
}

/** The index of the item covering `y` (binary search over the prefix sums). */
export function indexAt(offsets: Float64Array, y: number): number {
  let lo = 0;
  let hi = Math.max(0, offsets.length - 2);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((offsets[mid] as number) <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The item showing `seq`: its row, or the header of the collapsed chapter hiding it. */
export function indexOfSeq(items: readonly Item[], seq: number): number {
  let best = -1;
  for (let i = 0; i < items.length; i++) {
    const it = items[i] as Item;
    if (it.type === 'row' && it.row.seq === seq) return i;
    if (it.type === 'chapter' && it.collapsed && it.chapter.startSeq <= seq && seq <= it.chapter.endSeq && best < 0) best = i;
    if (it.type === 'row' && it.row.seq > seq) break;
  }
  return best;
}

function countBetween(sorted: readonly number[], from: number, to: number): number {
  return lowerBound(sorted, to + 1) - lowerBound(sorted, from);
}

function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
