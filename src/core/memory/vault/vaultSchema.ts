import { createFtsTableSql } from '../../search/ftsSearch';
import type { Operation } from '../../store/journal';
import type { Chunk } from './chunking';
import type { VaultKind } from './vaultLayout';

/** Promoted chat-history notes get their own index so they never crowd get_context's recall. */
export const HISTORY_NOTES_FTS = 'history_notes_fts';

/**
 * A vault file as the index last saw it. `hash` is the content hash when the indexer read the
 * file; after a tool appended an entry it is null and size + mtime are the identity (hashing a
 * whole day's log on every save would cost more than the save).
 */
export interface FileStat {
  size: number;
  mtimeMs: number;
  hash: string | null;
}

export interface NoteContent {
  title: string;
  aliases: string[];
  tags: string[];
  /** The note's own date (front matter), clamped to its write time; null for none. */
  noteDate: number | null;
  source: string | null;
  chunks: Chunk[];
}

export interface IndexedFile {
  /** Stable id of this file's record; a file that appears at a retired note's path gets a new one. */
  id: string;
  path: string;
  scope: string;
  kind: VaultKind;
  stat: FileStat;
  /** New text for notes and history notes; absent when only the stat moved, and for daily logs. */
  content?: NoteContent | undefined;
  /** Why the file's text was not indexed (too large), so it is not reported stale forever. */
  skipped?: string | null | undefined;
}

export interface AddedEntry {
  id: string;
  path: string;
  day: string;
  text: string;
  scope: string;
  source: string;
  at: number;
}

/** What index_memory found in the vault, decided under the store lock; appliers only copy it in. */
export interface VaultIndexed extends Operation {
  op: 'memory.vault.indexed';
  files: IndexedFile[];
  /** Records whose file is gone: a note leaves recall (retired, restorable); a day log's record is dropped. */
  removedFiles: string[];
  entriesAdded: AddedEntry[];
  entriesEdited: { id: string; text: string }[];
  /** Entries whose block a person deleted from the day's file: retired, restorable. */
  entriesRemoved: string[];
  /** Retired entries whose block is back in the file (an editor's undo): restored. */
  entriesBack: string[];
}

/** Take one memory out of recall (tool or a deleted file). The writer already moved the file. */
export interface MemoryRetired extends Operation {
  op: 'memory.retired';
  id: string;
  /** For `note:` ids: which record (a path can hold a live note and retired ones). */
  fileId?: string | undefined;
  /** For `entry:` ids: the day log's stat after the block was taken out, null when it was not clean. */
  daily?: { path: string; stat: FileStat | null } | undefined;
}

export interface MemoryRestored extends Operation {
  op: 'memory.restored';
  id: string;
  fileId?: string | undefined;
  /** For notes: the rewritten file's stat. */
  stat?: FileStat | undefined;
  daily?: { path: string; stat: FileStat | null } | undefined;
}

export const VAULT_MIGRATION = `
  ALTER TABLE facts ADD COLUMN valid_from INTEGER;
  ALTER TABLE facts ADD COLUMN valid_to INTEGER;
  ALTER TABLE facts ADD COLUMN retired_at INTEGER;
  UPDATE facts SET valid_from = recorded_at;
  UPDATE facts SET valid_to = (SELECT n.recorded_at FROM facts n WHERE n.id = facts.superseded_by) WHERE superseded_by IS NOT NULL;
  ALTER TABLE notes ADD COLUMN retired_at INTEGER;
  ALTER TABLE notes ADD COLUMN edited_at INTEGER;
  CREATE INDEX notes_by_path ON notes(path);
  CREATE INDEX notes_by_time ON notes(created_at);
  CREATE INDEX notes_by_fact ON notes(fact_id);
  CREATE INDEX facts_by_predicate ON facts(predicate_key, superseded_at, recorded_at);
  CREATE INDEX facts_by_time ON facts(recorded_at);
  CREATE TABLE vault_files (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    scope TEXT NOT NULL,
    kind TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ms REAL NOT NULL,
    hash TEXT,
    title TEXT,
    aliases TEXT NOT NULL DEFAULT '[]',
    tags TEXT NOT NULL DEFAULT '[]',
    note_date INTEGER,
    source TEXT,
    skipped TEXT,
    indexed_at INTEGER NOT NULL,
    retired_at INTEGER
  );
  CREATE UNIQUE INDEX vault_files_live ON vault_files(path) WHERE retired_at IS NULL;
  CREATE INDEX vault_files_by_path ON vault_files(path, retired_at);
  CREATE TABLE note_chunks (
    file_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    line INTEGER NOT NULL,
    fts_docid INTEGER,
    PRIMARY KEY (file_id, seq)
  );
  CREATE TABLE embeddings (
    key TEXT NOT NULL,
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    blob TEXT NOT NULL,
    idx INTEGER NOT NULL,
    dims INTEGER NOT NULL,
    PRIMARY KEY (key, model)
  );
  CREATE TABLE vault_version (v INTEGER NOT NULL);
  INSERT INTO vault_version VALUES (0);
  ${createFtsTableSql(HISTORY_NOTES_FTS, ['ref'])}
`;

/**
 * How many live notes each day log holds, kept by triggers so every way a note is added, retired,
 * restored, moved or deleted (appliers, replay, a rebuild) keeps it exact. The first search after
 * an open asks which day logs were never written (vaultState.ts unrenderedPaths): from this table
 * that is a few pages, where hopping through notes_by_path touched one index page per day log,
 * spread over the whole index, each a snapshot chunk a fresh process must decompress (12 of the
 * first query's 93 chunks on the 200 MB bench store). Rows at zero stay; readers skip them.
 */
export const NOTE_PATHS_MIGRATION = `
  CREATE TABLE note_paths (path TEXT PRIMARY KEY, live INTEGER NOT NULL);
  INSERT INTO note_paths(path, live) SELECT path, count(*) FROM notes WHERE retired_at IS NULL GROUP BY path;
  CREATE TRIGGER note_paths_insert AFTER INSERT ON notes WHEN new.retired_at IS NULL BEGIN
    INSERT INTO note_paths(path, live) VALUES (new.path, 1) ON CONFLICT(path) DO UPDATE SET live = live + 1;
  END;
  CREATE TRIGGER note_paths_delete AFTER DELETE ON notes WHEN old.retired_at IS NULL BEGIN
    UPDATE note_paths SET live = live - 1 WHERE path = old.path;
  END;
  CREATE TRIGGER note_paths_update AFTER UPDATE OF path, retired_at ON notes BEGIN
    UPDATE note_paths SET live = live - 1 WHERE path = old.path AND old.retired_at IS NULL;
    INSERT INTO note_paths(path, live) SELECT new.path, 1 WHERE new.retired_at IS NULL ON CONFLICT(path) DO UPDATE SET live = live + 1;
  END;
`;

/**
 * Each record carries the vault version of its last change, so readers reload only what moved.
 * (Also rebuilds the rule index with recorded_at, which an early build of migration 2 lacked.)
 */
export const VAULT_RECORD_VERSION_MIGRATION = `
  ALTER TABLE vault_files ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX vault_files_by_version ON vault_files(version);
  DROP INDEX IF EXISTS facts_by_predicate;
  CREATE INDEX facts_by_predicate ON facts(predicate_key, superseded_at, recorded_at);
`;
