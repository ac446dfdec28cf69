import type { Store } from '../store/store';
import { queryRows, type Database } from '../store/sqlite';

/** Every table that names a blob by its hash: a blob none of them names may be deleted. */
const BLOB_REFERENCES = [
  'SELECT 1 FROM events WHERE blob = ?1',
  'SELECT 1 FROM lcm_files WHERE blob = ?1',
  'SELECT 1 FROM chapters WHERE sha256 = ?1',
  'SELECT 1 FROM chapter_plans WHERE sha256 = ?1',
  'SELECT 1 FROM child_sessions WHERE first_message_sha = ?1',
  'SELECT 1 FROM embeddings WHERE blob = ?1',
];

export function blobReferenced(db: Database, hash: string): boolean {
  return BLOB_REFERENCES.some((sql) => queryRows(db, `${sql} LIMIT 1`, [hash]).length > 0);
}

/**
 * Deletes those of `hashes` that no row names, under the lock on the latest state, so a blob
 * another process's write named meanwhile stays. Resolves to how many files went.
 */
export function deleteUnreferencedBlobs(store: Store, hashes: readonly string[]): Promise<number> {
  if (!hashes.length) return Promise.resolve(0);
  return store.exclusive((db) => {
    let deleted = 0;
    for (const hash of new Set(hashes)) if (!blobReferenced(db, hash) && store.blobs.delete(hash)) deleted++;
    return deleted;
  });
}
