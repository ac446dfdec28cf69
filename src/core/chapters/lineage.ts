import { queryRows, queryScalar, type Database, type SqlValue } from '../store/sqlite';
import type { ChildIntent } from './chaptersSchema';
import type { TocChapter, TocPlan } from './toc';

const CHAPTER_COLUMNS = `c.id, c.title, c.summary, c.session_id, coalesce(s.source, '') AS source, c.start_seq, c.end_seq, c.tokens, c.sha256, c.first_at, c.last_at`;

export interface LinkedChild {
  id: string;
  marker: string;
  parentSessionId: string;
  intent: ChildIntent;
  /** What the child was given: the ancestry's chapters, chronological. */
  carried: TocChapter[];
}

export function toTocChapter(r: Record<string, SqlValue>): TocChapter {
  return {
    id: String(r.id),
    title: String(r.title),
    summary: String(r.summary),
    sessionId: String(r.session_id),
    source: String(r.source ?? ''),
    startSeq: Number(r.start_seq),
    endSeq: Number(r.end_seq),
    tokens: Number(r.tokens),
    sha256: String(r.sha256),
    firstAt: r.first_at === null || r.first_at === undefined ? null : Number(r.first_at),
    lastAt: r.last_at === null || r.last_at === undefined ? null : Number(r.last_at),
  };
}

/** Every chapter archived from this session, by start. Overlaps are possible: a fork from a row re-archives a shorter span. */
export function chaptersOfSession(db: Database, sessionId: string): TocChapter[] {
  return queryRows(db, `SELECT ${CHAPTER_COLUMNS} FROM chapters c LEFT JOIN sessions s ON s.id = c.session_id WHERE c.session_id = ? ORDER BY c.start_seq, c.end_seq DESC`, [sessionId]).map(toTocChapter);
}

export function chapterById(db: Database, id: string): TocChapter | undefined {
  const r = queryRows(db, `SELECT ${CHAPTER_COLUMNS} FROM chapters c LEFT JOIN sessions s ON s.id = c.session_id WHERE c.id = ?`, [id])[0];
  return r ? toTocChapter(r) : undefined;
}

export function carriedBy(db: Database, childId: string): TocChapter[] {
  return queryRows(
    db,
    `SELECT ${CHAPTER_COLUMNS} FROM child_chapters cc JOIN chapters c ON c.id = cc.chapter_id LEFT JOIN sessions s ON s.id = c.session_id WHERE cc.child_id = ? ORDER BY cc.ord`,
    [childId],
  ).map(toTocChapter);
}

/** The child record this chat session was linked to (it opened with that child's marker), if any. */
export function linkedChild(db: Database, sessionId: string): LinkedChild | undefined {
  const r = queryRows(db, 'SELECT id, marker, parent_session_id, intent FROM child_sessions WHERE linked_session_id = ? ORDER BY linked_at LIMIT 1', [sessionId])[0];
  if (!r) return undefined;
  const id = String(r.id);
  return { id, marker: String(r.marker), parentSessionId: String(r.parent_session_id), intent: String(r.intent) as ChildIntent, carried: carriedBy(db, id) };
}

/** Sessions from the oldest ancestor down to `sessionId`, following child → parent links (cycle-safe). */
export function lineageOf(db: Database, sessionId: string): string[] {
  const chain = [sessionId];
  const seen = new Set(chain);
  let current = sessionId;
  for (;;) {
    const parent = queryScalar(db, 'SELECT parent_session_id FROM child_sessions WHERE linked_session_id = ? ORDER BY linked_at LIMIT 1', [current]);
    if (typeof parent !== 'string' || seen.has(parent)) break;
    chain.unshift(parent);
    seen.add(parent);
    current = parent;
  }
  return chain;
}

/** The seq of the message that opened a child session (its table of contents): archiving starts after it. */
export function seedSeq(db: Database, sessionId: string, marker: string): number {
  const seq = queryScalar(db, "SELECT min(seq) FROM events WHERE session_id = ? AND kind = 'user' AND instr(text, ?) > 0", [sessionId, marker]);
  return typeof seq === 'number' ? seq : 0;
}

/** The newest plan among these chapters (by the time of its call, then seq). */
export function latestPlan(db: Database, chapterIds: readonly string[]): TocPlan | null {
  if (!chapterIds.length) return null;
  const order = new Map(chapterIds.map((id, i) => [id, i]));
  const rows = queryRows(db, `SELECT id, chapter_id, tool_name, seq, title, status, outline FROM chapter_plans WHERE chapter_id IN (${chapterIds.map(() => '?').join(',')})`, [...chapterIds]);
  const best = rows.sort((a, b) => (order.get(String(b.chapter_id)) ?? 0) - (order.get(String(a.chapter_id)) ?? 0) || Number(b.seq) - Number(a.seq))[0];
  if (!best) return null;
  return {
    id: String(best.id),
    chapterId: String(best.chapter_id),
    toolName: String(best.tool_name),
    seq: Number(best.seq),
    title: String(best.title),
    status: String(best.status),
    outline: JSON.parse(String(best.outline)) as string[],
  };
}

/**
 * The session's own chapters a child carries up to `uptoSeq`: those that do not overlap a chosen
 * range, and among overlapping older chapters the earliest-starting, longest one.
 */
export function ownCarried(existing: readonly TocChapter[], chosen: readonly { startSeq: number; endSeq: number }[], uptoSeq: number): TocChapter[] {
  const overlaps = (a: { startSeq: number; endSeq: number }, b: { startSeq: number; endSeq: number }) => a.startSeq <= b.endSeq && b.startSeq <= a.endSeq;
  const out: TocChapter[] = [];
  let lastEnd = -1;
  for (const c of [...existing].sort((a, b) => a.startSeq - b.startSeq || b.endSeq - a.endSeq)) {
    if (c.endSeq > uptoSeq || c.startSeq <= lastEnd || chosen.some((r) => overlaps(r, c))) continue;
    out.push(c);
    lastEnd = c.endSeq;
  }
  return out;
}
