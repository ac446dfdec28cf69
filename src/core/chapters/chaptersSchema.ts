import { createFtsTableSql, indexTerms } from '../search/ftsSearch';
import type { Operation } from '../store/journal';
import type { StoreModule } from '../store/schema';
import { queryRows, queryScalar, type Database } from '../store/sqlite';

export const CHAPTERS_FTS = 'chapters_fts';

/** The two kinds of documents chapters_search finds; stored in the FTS `scope` column so the one scorer filters by kind. */
export type ArchiveKind = 'chapter' | 'plan';

/** A verbatim chapter: a range of one session's events rendered as Markdown and kept as a content-addressed blob. */
export interface ChapterRecord {
  id: string;
  sessionId: string;
  startSeq: number;
  endSeq: number;
  title: string;
  summary: string;
  /** sha256 of the rendered Markdown, which is also its blob address. */
  sha256: string;
  tokens: number;
  bytes: number;
  events: number;
  topics: string[];
  firstAt: number | null;
  lastAt: number | null;
  /** What the keyword index holds: title, summary and a bounded prefix of every event (the blob holds everything). */
  indexText: string;
  /** `team:<name>` when chapters are shared with that team (teamShare.ts) and its blobs fit the pool; absent: this machine's. */
  scope?: string;
}

/** A plan found in the archived events (a todo/plan tool call and its result), findable as kind: plan. */
export interface PlanRecord {
  id: string;
  chapterId: string;
  sessionId: string;
  seq: number;
  resultSeq: number | null;
  toolName: string;
  title: string;
  status: string;
  outline: string[];
  verdict: string;
  sha256: string;
  tokens: number;
  at: number | null;
  /** What the keyword index holds: the final plan and every step any earlier call of it in the chapter named. */
  indexText: string;
  /** Its chapter's scope. */
  scope?: string;
}

export type ChildIntent = 'continue' | 'fork';

/** The Recollect session a continue/fork opens: its parent, what it carries, and the marker that links the real chat to it. */
export interface ChildRecord {
  id: string;
  marker: string;
  parentSessionId: string;
  intent: ChildIntent;
  uptoSeq: number | null;
  title: string | null;
  note: string;
  preset: string;
  firstMessageSha: string | null;
  firstMessageTokens: number | null;
  createdBy: string;
}

/** One continue (or a person's fork): new chapters, the plans in them, and the child that carries `carried` in order. */
export interface ChaptersArchived extends Operation {
  op: 'chapters.archived';
  chapters: ChapterRecord[];
  plans: PlanRecord[];
  child: ChildRecord;
  carried: string[];
}

/**
 * Team chapters and their plans as another machine receives them through the pool: without the
 * child session, which belongs to the chat that made it. Their blobs travel beside them.
 */
export interface ChaptersShared extends Operation {
  op: 'chapters.shared';
  chapters: ChapterRecord[];
  plans: PlanRecord[];
}

/**
 * A chat session appeared whose first message holds a child's marker. A marker nobody recorded
 * (a model's fork writes nothing) creates the child record here, from what the marker and the
 * table of contents say.
 */
export interface ChildLinked extends Operation {
  op: 'chapters.child.linked';
  marker: string;
  sessionId: string;
  childId: string;
  parentSessionId: string;
  intent: ChildIntent;
  carried: string[];
}

const MIGRATIONS = [
  `
  CREATE TABLE chapters (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    start_seq INTEGER NOT NULL,
    end_seq INTEGER NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    events INTEGER NOT NULL,
    topics TEXT NOT NULL,
    first_at INTEGER,
    last_at INTEGER,
    created_at INTEGER NOT NULL,
    fts_docid INTEGER
  );
  CREATE INDEX chapters_by_session ON chapters(session_id, start_seq);
  CREATE TABLE chapter_plans (
    id TEXT PRIMARY KEY,
    chapter_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    result_seq INTEGER,
    tool_name TEXT NOT NULL,
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    outline TEXT NOT NULL,
    verdict TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    at INTEGER,
    fts_docid INTEGER
  );
  CREATE INDEX chapter_plans_by_chapter ON chapter_plans(chapter_id);
  CREATE TABLE child_sessions (
    id TEXT PRIMARY KEY,
    marker TEXT NOT NULL UNIQUE,
    parent_session_id TEXT NOT NULL,
    intent TEXT NOT NULL,
    upto_seq INTEGER,
    title TEXT,
    note TEXT NOT NULL,
    preset TEXT NOT NULL,
    first_message_sha TEXT,
    first_message_tokens INTEGER,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    linked_session_id TEXT,
    linked_at INTEGER
  );
  CREATE INDEX child_sessions_by_parent ON child_sessions(parent_session_id);
  CREATE INDEX child_sessions_by_link ON child_sessions(linked_session_id);
  CREATE TABLE child_chapters (
    child_id TEXT NOT NULL,
    chapter_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    PRIMARY KEY (child_id, chapter_id)
  );
  ${createFtsTableSql(CHAPTERS_FTS, ['ref'])}
  `,
  // Chapters (and their plans) archived for a team travel through the pool; the others stay here.
  `
  ALTER TABLE chapters ADD COLUMN scope TEXT NOT NULL DEFAULT 'global';
  ALTER TABLE chapter_plans ADD COLUMN scope TEXT NOT NULL DEFAULT 'global';
  `,
];

function applyArchived(db: Database, op: Operation): void {
  const a = op as ChaptersArchived;
  insertChapters(db, a.chapters, a.plans, a.at);
  insertChild(db, a.child, a.at);
  a.carried.forEach((chapterId, i) => db.run('INSERT OR IGNORE INTO child_chapters(child_id, chapter_id, ord) VALUES (?, ?, ?)', [a.child.id, chapterId, i]));
}

function applyShared(db: Database, op: Operation): void {
  const s = op as ChaptersShared;
  insertChapters(db, s.chapters, s.plans, s.at);
}

function insertChapters(db: Database, chapters: readonly ChapterRecord[], plans: readonly PlanRecord[], at: number): void {
  for (const c of chapters) {
    if (queryScalar(db, 'SELECT 1 FROM chapters WHERE id = ?', [c.id])) continue;
    db.run(`INSERT INTO ${CHAPTERS_FTS}(terms, body, created_at, scope, ref) VALUES (?, ?, ?, 'chapter', ?)`, [indexTerms(c.indexText), c.indexText, c.lastAt ?? at, c.id]);
    db.run(
      `INSERT INTO chapters(id, session_id, start_seq, end_seq, title, summary, sha256, tokens, bytes, events, topics, first_at, last_at, created_at, fts_docid, scope)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [c.id, c.sessionId, c.startSeq, c.endSeq, c.title, c.summary, c.sha256, c.tokens, c.bytes, c.events, JSON.stringify(c.topics), c.firstAt, c.lastAt, at, lastRowId(db), c.scope ?? 'global'],
    );
  }
  for (const p of plans) {
    if (queryScalar(db, 'SELECT 1 FROM chapter_plans WHERE id = ?', [p.id])) continue;
    db.run(`INSERT INTO ${CHAPTERS_FTS}(terms, body, created_at, scope, ref) VALUES (?, ?, ?, 'plan', ?)`, [indexTerms(p.indexText), p.indexText, p.at ?? at, p.id]);
    db.run(
      `INSERT INTO chapter_plans(id, chapter_id, session_id, seq, result_seq, tool_name, title, status, outline, verdict, sha256, tokens, at, fts_docid, scope)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [p.id, p.chapterId, p.sessionId, p.seq, p.resultSeq, p.toolName, p.title, p.status, JSON.stringify(p.outline), p.verdict, p.sha256, p.tokens, p.at, lastRowId(db), p.scope ?? 'global'],
    );
  }
}

function insertChild(db: Database, c: ChildRecord, at: number): void {
  db.run(
    `INSERT INTO child_sessions(id, marker, parent_session_id, intent, upto_seq, title, note, preset, first_message_sha, first_message_tokens, created_at, created_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [c.id, c.marker, c.parentSessionId, c.intent, c.uptoSeq, c.title, c.note, c.preset, c.firstMessageSha, c.firstMessageTokens, at, c.createdBy],
  );
}

function applyLinked(db: Database, op: Operation): void {
  const l = op as ChildLinked;
  const known = queryRows(db, 'SELECT id, linked_session_id FROM child_sessions WHERE marker = ?', [l.marker])[0];
  if (!known) {
    insertChild(
      db,
      { id: l.childId, marker: l.marker, parentSessionId: l.parentSessionId, intent: l.intent, uptoSeq: null, title: null, note: '', preset: '', firstMessageSha: null, firstMessageTokens: null, createdBy: 'marker' },
      l.at,
    );
    l.carried.forEach((chapterId, i) => db.run('INSERT OR IGNORE INTO child_chapters(child_id, chapter_id, ord) VALUES (?, ?, ?)', [l.childId, chapterId, i]));
  }
  // The first session that shows the marker is the child; a later paste of the same text is not.
  db.run('UPDATE child_sessions SET linked_session_id = ?, linked_at = ? WHERE marker = ? AND linked_session_id IS NULL', [l.sessionId, l.at, l.marker]);
}

function lastRowId(db: Database): number {
  return Number(queryScalar(db, 'SELECT last_insert_rowid()'));
}

export const chaptersModule: StoreModule = {
  name: 'chapters',
  migrations: MIGRATIONS,
  appliers: {
    'chapters.archived': applyArchived,
    'chapters.shared': applyShared,
    'chapters.child.linked': applyLinked,
  },
};
