import type { Operation } from '../store/journal';
import type { StoreModule } from '../store/schema';
import type { Database } from '../store/sqlite';

/** One file of a staged import: where it goes in the vault and its text. */
export interface StagedFile {
  index: number;
  relativePath: string;
  /** Vault-relative: Imported/<label>/<relativePath>. */
  target: string;
  markdown: string;
}

/**
 * A previewed import, held in the store (not in one process's memory) so any process — the MCP
 * server, the extension, the CLI — can apply it. The files' text is in the journal line itself:
 * a batch is at most 128 KiB.
 */
export interface ImportStaged extends Operation {
  op: 'transfer.import.staged';
  id: string;
  label: string;
  client: string;
  files: StagedFile[];
}

export interface CreatedFile {
  path: string;
  /** sha256 of what the import wrote: undo retires the note only while the file still has it. */
  hash: string;
}

export interface ImportApplied extends Operation {
  op: 'transfer.import.applied';
  id: string;
  created: CreatedFile[];
  conflicts: string[];
  unchanged: string[];
}

export interface ImportUndone extends Operation {
  op: 'transfer.import.undone';
  id: string;
  retired: string[];
  kept: string[];
}

const MIGRATIONS = [
  `
  CREATE TABLE import_batches (
    id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    client TEXT NOT NULL,
    files TEXT NOT NULL,
    staged_at INTEGER NOT NULL,
    applied_at INTEGER,
    created TEXT,
    conflicts TEXT,
    unchanged TEXT,
    undone_at INTEGER,
    retired TEXT,
    kept TEXT
  );
  `,
];

function applyStaged(db: Database, op: Operation): void {
  const s = op as ImportStaged;
  db.run('INSERT OR IGNORE INTO import_batches(id, label, client, files, staged_at) VALUES (?, ?, ?, ?, ?)', [s.id, s.label, s.client, JSON.stringify(s.files), s.at]);
}

function applyApplied(db: Database, op: Operation): void {
  const a = op as ImportApplied;
  db.run('UPDATE import_batches SET applied_at = ?, created = ?, conflicts = ?, unchanged = ? WHERE id = ? AND applied_at IS NULL', [
    a.at, JSON.stringify(a.created), JSON.stringify(a.conflicts), JSON.stringify(a.unchanged), a.id,
  ]);
}

function applyUndone(db: Database, op: Operation): void {
  const u = op as ImportUndone;
  db.run('UPDATE import_batches SET undone_at = ?, retired = ?, kept = ? WHERE id = ? AND undone_at IS NULL', [u.at, JSON.stringify(u.retired), JSON.stringify(u.kept), u.id]);
}

export const transferModule: StoreModule = {
  name: 'transfer',
  migrations: MIGRATIONS,
  appliers: {
    'transfer.import.staged': applyStaged,
    'transfer.import.applied': applyApplied,
    'transfer.import.undone': applyUndone,
  },
};
