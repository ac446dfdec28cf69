import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { Store } from '../../store/store';
import { queryRows, queryScalar, type Database, type SqlValue } from '../../store/sqlite';
import { absolutePath, classifyPath, listVaultFiles, type ListedFile, type VaultKind } from './vaultLayout';

export interface FileRecord {
  id: string;
  path: string;
  scope: string;
  kind: VaultKind;
  size: number;
  mtimeMs: number;
  hash: string | null;
}

/** A scan cheaper than this runs on every read. */
const CHEAP_SCAN_MS = 3;
/**
 * A vault of at most this many files is listed on every read whatever the listing cost: a
 * loaded machine can make even a tiny listing take over CHEAP_SCAN_MS, and a person's edit must
 * then still show at once, not up to twenty listing-costs later.
 */
const ALWAYS_LISTED_FILES = 200;

export type ChangeKind = 'added' | 'modified' | 'deleted' | 'unrendered';

export interface VaultChange {
  path: string;
  change: ChangeKind;
}

export interface Staleness {
  stale: boolean;
  changed_files: number;
  changes: VaultChange[];
}

export function vaultVersion(db: Database): number {
  return Number(queryScalar(db, 'SELECT v FROM vault_version') ?? 0);
}

export function liveRecords(db: Database): Map<string, FileRecord> {
  const rows = queryRows(db, 'SELECT id, path, scope, kind, size, mtime_ms, hash FROM vault_files WHERE retired_at IS NULL');
  return new Map(rows.map((r) => [String(r.path), toRecord(r)]));
}

export function recordAt(db: Database, path: string): FileRecord | undefined {
  const r = queryRows(db, 'SELECT id, path, scope, kind, size, mtime_ms, hash FROM vault_files WHERE path = ? AND retired_at IS NULL', [path])[0];
  return r && toRecord(r);
}

export function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/**
 * Day logs the store has entries for but no file was ever written for (a store from before the
 * vault), ascending. The first search after an open runs this, so it reads the per-path counts
 * the note_paths triggers keep (vaultSchema.ts): a few pages, where even hopping from one distinct
 * path to the next through notes_by_path read an index page per day log, which a snapshot read on
 * demand must first decompress.
 */
export function unrenderedPaths(db: Database): string[] {
  return queryRows(db, 'SELECT path FROM note_paths WHERE live > 0 AND path NOT IN (SELECT path FROM vault_files WHERE retired_at IS NULL) ORDER BY path').map((r) => String(r.path));
}

/**
 * Compares the vault on disk with what the index last saw: new files, files whose size or
 * mtime moved (and, when the index knows the content hash, whose content really changed),
 * files gone. It runs inside every get_context and search, so it keeps what it can:
 * - the records, reloaded only where their version moved (a save touches one record);
 * - the directory listing: a vault of at most ALWAYS_LISTED_FILES files, or one listed in a few
 *   milliseconds, is listed on every read; a larger one again once twenty times the listing's cost has passed (under ~5%
 *   of back-to-back reads; a change is seen within a second), or at once after another
 *   process changed the index. This process's own saves patch the listing instead, since
 *   they know the file and its new size and time;
 * - the day logs the store has entries for but never wrote (a store from before the vault),
 *   looked up once and again after indexing.
 */
export class StaleMonitor {
  private records: { version: number; byPath: Map<string, FileRecord> } | undefined;
  private listing: { version: number; at: number; cost: number; files: Map<string, ListedFile> } | undefined;
  private unrendered: string[] | undefined;
  private seenVersion: { at: number; v: number } | undefined;
  /** Content hashes of files whose stat moved but content did not (a touch, a checkout). */
  private readonly hashes = new Map<string, { size: number; mtimeMs: number; hash: string }>();

  constructor(
    private readonly store: Store,
    private readonly root: string,
  ) {}

  check(): Staleness {
    const db = this.store.db;
    const version = this.vaultVersionNow(db);
    const l = this.listing;
    const reuse = l !== undefined && l.version === version && l.files.size > ALWAYS_LISTED_FILES && l.cost > CHEAP_SCAN_MS && performance.now() - l.at < l.cost * 20;
    return this.compare(db, version, !reuse);
  }

  /**
   * vault_version, read again only when the store's version (its journal position) moved: only
   * a journal operation changes it, and a statement costs a search ~20 µs.
   */
  private vaultVersionNow(db: Database): number {
    const at = this.store.version;
    if (this.seenVersion?.at !== at) this.seenVersion = { at, v: vaultVersion(db) };
    return this.seenVersion.v;
  }

  /** The next check lists the vault again and looks up unwritten day logs (after index, retire, restore). */
  invalidate(): void {
    this.listing = undefined;
    this.unrendered = undefined;
  }

  /**
   * This process just changed one day log. When the listing was current up to that write
   * (`versionBefore`, read under the lock), it takes the file's new stat instead of being
   * redone. (Another process's write landing between this one and the next read is then seen
   * at the next listing, at most twenty listing-costs later.)
   */
  ownWrite(path: string, versionBefore: number, fileError: boolean): void {
    if (fileError) this.unrendered = undefined;
    const l = this.listing;
    if (!l || l.version !== versionBefore) return;
    const st = statOf(absolutePath(this.root, path));
    if (st) l.files.set(path, { path, ...st });
    else l.files.delete(path);
    l.version = vaultVersion(this.store.db);
  }

  /** The files as they are now and the changes against the index (always lists the vault). */
  scan(): Staleness & { listed: ListedFile[] } {
    const db = this.store.db;
    const result = this.compare(db, vaultVersion(db), true);
    return { ...result, listed: [...(this.listing?.files.values() ?? [])] };
  }

  private compare(db: Database, version: number, relist: boolean): Staleness {
    const byPath = this.syncRecords(db, version);
    this.unrendered ??= unrenderedPaths(db);
    if (relist || !this.listing) {
      const t = performance.now();
      const files = new Map(listVaultFiles(this.root).map((f) => [f.path, f]));
      this.listing = { version, at: performance.now(), cost: performance.now() - t, files };
    }
    const listed = this.listing.files;
    const changes: VaultChange[] = [];
    for (const f of listed.values()) {
      const rec = byPath.get(f.path);
      if (!rec) {
        if (!('problem' in classifyPath(f.path))) changes.push({ path: f.path, change: 'added' });
      } else if ((rec.size !== f.size || rec.mtimeMs !== f.mtimeMs) && !this.sameContent(rec, f)) {
        changes.push({ path: f.path, change: 'modified' });
      }
    }
    for (const path of byPath.keys()) if (!listed.has(path)) changes.push({ path, change: 'deleted' });
    for (const path of this.unrendered) if (!listed.has(path) && !byPath.has(path)) changes.push({ path, change: 'unrendered' });
    return { stale: changes.length > 0, changed_files: changes.length, changes };
  }

  /** Live records by path, reloading only the rows whose version moved since the last look. */
  private syncRecords(db: Database, version: number): Map<string, FileRecord> {
    if (!this.records) {
      this.records = { version, byPath: liveRecords(db) };
      return this.records.byPath;
    }
    if (this.records.version === version) return this.records.byPath;
    const byPath = this.records.byPath;
    const rows = queryRows(db, 'SELECT id, path, scope, kind, size, mtime_ms, hash, retired_at FROM vault_files WHERE version > ? ORDER BY version', [this.records.version]);
    for (const r of rows) {
      const path = String(r.path);
      if (r.retired_at !== null) {
        if (byPath.get(path)?.id === String(r.id)) byPath.delete(path);
      } else {
        byPath.set(path, toRecord(r));
      }
    }
    this.records.version = version;
    return byPath;
  }

  private sameContent(rec: FileRecord, f: ListedFile): boolean {
    if (rec.hash === null) return false;
    const cached = this.hashes.get(f.path);
    if (cached && cached.size === f.size && cached.mtimeMs === f.mtimeMs) return cached.hash === rec.hash;
    let hash: string;
    try {
      hash = sha256(fs.readFileSync(absolutePath(this.root, f.path)));
    } catch {
      return false;
    }
    this.hashes.set(f.path, { size: f.size, mtimeMs: f.mtimeMs, hash });
    return hash === rec.hash;
  }
}

function toRecord(r: Record<string, SqlValue>): FileRecord {
  return { id: String(r.id), path: String(r.path), scope: String(r.scope), kind: String(r.kind) as VaultKind, size: Number(r.size), mtimeMs: Number(r.mtime_ms), hash: r.hash === null ? null : String(r.hash) };
}

function statOf(abs: string): { size: number; mtimeMs: number } | undefined {
  try {
    const st = fs.statSync(abs);
    return st.isFile() ? { size: st.size, mtimeMs: st.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}
