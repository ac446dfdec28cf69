import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import type { Store } from '../../store/store';
import { queryRows, queryScalar, type Database } from '../../store/sqlite';
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
  return new Map(
    rows.map((r) => [
      String(r.path),
      { id: String(r.id), path: String(r.path), scope: String(r.scope), kind: String(r.kind) as VaultKind, size: Number(r.size), mtimeMs: Number(r.mtime_ms), hash: r.hash === null ? null : String(r.hash) },
    ]),
  );
}

export function recordAt(db: Database, path: string): FileRecord | undefined {
  const r = queryRows(db, 'SELECT id, path, scope, kind, size, mtime_ms, hash FROM vault_files WHERE path = ? AND retired_at IS NULL', [path])[0];
  return r && { id: String(r.id), path: String(r.path), scope: String(r.scope), kind: String(r.kind) as VaultKind, size: Number(r.size), mtimeMs: Number(r.mtime_ms), hash: r.hash === null ? null : String(r.hash) };
}

export function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Day logs the store has entries for but no file was ever written for (a store from before the vault). */
function unrenderedPaths(db: Database): string[] {
  return queryRows(
    db,
    'SELECT DISTINCT path FROM notes WHERE retired_at IS NULL AND path NOT IN (SELECT path FROM vault_files WHERE retired_at IS NULL)',
  ).map((r) => String(r.path));
}

/**
 * Compares the vault on disk with what the index last saw: new files, files whose size or
 * mtime moved (and, when the index knows the content hash, whose content really changed),
 * files gone. A stat per file is cheap, but a vault of tens of thousands of notes makes a full
 * scan cost tens of milliseconds; so once a scan costs more than a few milliseconds it is
 * repeated only when the index changed or when twenty times its own cost has passed since the
 * last one — under ~5% of the time of back-to-back reads, and a change is seen within a
 * second. A vault small enough to scan in a few milliseconds is checked on every read.
 */
export class StaleMonitor {
  private records: { version: number; byPath: Map<string, FileRecord>; unrendered: string[] } | undefined;
  private last: { at: number; cost: number; version: number; result: Staleness } | undefined;
  /** Content hashes of files whose stat moved but content did not (a touch, a checkout). */
  private readonly hashes = new Map<string, { size: number; mtimeMs: number; hash: string }>();

  constructor(
    private readonly store: Store,
    private readonly root: string,
  ) {}

  check(): Staleness {
    const db = this.store.db;
    const version = vaultVersion(db);
    const now = performance.now();
    if (this.last && this.last.version === version && this.last.cost > CHEAP_SCAN_MS && now - this.last.at < this.last.cost * 20) return this.last.result;
    const result = this.scan(db, version);
    this.last = { at: performance.now(), cost: performance.now() - now, version, result };
    return result;
  }

  /** The next check scans again (after a write this process made to the vault). */
  invalidate(): void {
    this.last = undefined;
  }

  /** The files as they are now and the changes against the index. */
  scan(db: Database = this.store.db, version = vaultVersion(db)): Staleness & { listed: ListedFile[] } {
    if (!this.records || this.records.version !== version) {
      this.records = { version, byPath: liveRecords(db), unrendered: unrenderedPaths(db) };
    }
    const { byPath, unrendered } = this.records;
    const listed = listVaultFiles(this.root);
    const seen = new Set<string>();
    const changes: VaultChange[] = [];
    for (const f of listed) {
      seen.add(f.path);
      const rec = byPath.get(f.path);
      if (!rec) {
        if (!('problem' in classifyPath(f.path))) changes.push({ path: f.path, change: 'added' });
      } else if ((rec.size !== f.size || rec.mtimeMs !== f.mtimeMs) && !this.sameContent(rec, f)) {
        changes.push({ path: f.path, change: 'modified' });
      }
    }
    for (const path of byPath.keys()) if (!seen.has(path)) changes.push({ path, change: 'deleted' });
    for (const path of unrendered) if (!seen.has(path)) changes.push({ path, change: 'unrendered' });
    return { stale: changes.length > 0, changed_files: changes.length, changes, listed };
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
