import { createHash } from 'node:crypto';
import type { ClientBase } from 'pg';
import type { BlobStore } from '../store/blobStore';

/**
 * The largest blob (an archived chapter's or a plan's Markdown) that travels through the pool.
 * The server refuses a larger one too (a CHECK on recollect.blobs), so one member cannot fill
 * the team's database with a single chapter; a chapter over it is archived on its machine only.
 */
export const POOL_BLOB_MAX = 4 * 1024 * 1024;

/** Blobs per statement, so a batch of chapters never holds more than this many in memory at once. */
const BLOBS_PER_QUERY = 8;

/**
 * Puts the blobs `hashes` name on the pool, inside the caller's push transaction: a push that
 * dies before its commit leaves neither the operations nor their blobs, and one repeated sends
 * only what the pool lacks. Blobs are content-addressed and unique per team, so each is stored
 * once whoever sends it. A blob missing from this store (or over the limit) is not sent; the
 * operation still is, and a receiver shows the record without its text.
 */
export async function pushBlobs(client: ClientBase, team: string, blobs: BlobStore, hashes: readonly string[]): Promise<number> {
  const wanted = [...new Set(hashes)];
  if (!wanted.length) return 0;
  const there = new Set((await client.query<{ sha256: string }>('SELECT sha256 FROM recollect.blobs WHERE team = $1 AND sha256 = ANY($2::text[])', [team, wanted])).rows.map((r) => r.sha256));
  const missing = wanted.filter((h) => !there.has(h));
  let sent = 0;
  for (let i = 0; i < missing.length; i += BLOBS_PER_QUERY) {
    const part: { hash: string; bytes: Buffer }[] = [];
    for (const hash of missing.slice(i, i + BLOBS_PER_QUERY)) {
      const bytes = blobs.get(hash);
      if (bytes && bytes.length <= POOL_BLOB_MAX) part.push({ hash, bytes });
    }
    if (!part.length) continue;
    await client.query(
      `INSERT INTO recollect.blobs(team, sha256, bytes) SELECT $1, u.h, u.b FROM unnest($2::text[], $3::bytea[]) AS u(h, b) ON CONFLICT (team, sha256) DO NOTHING`,
      [team, part.map((p) => p.hash), part.map((p) => p.bytes)],
    );
    sent += part.length;
  }
  return sent;
}

/**
 * Brings the blobs `hashes` name that this store lacks from the pool, before the pulled line
 * that names them is journaled (a journal line never names a blob that is not on disk). Each is
 * checked against its address and the limit; one that fails either is not kept.
 */
export async function pullBlobs(client: ClientBase, team: string, blobs: BlobStore, hashes: readonly string[]): Promise<number> {
  const missing = [...new Set(hashes)].filter((h) => !blobs.has(h));
  let got = 0;
  for (let i = 0; i < missing.length; i += BLOBS_PER_QUERY) {
    const part = missing.slice(i, i + BLOBS_PER_QUERY);
    const r = await client.query<{ sha256: string; bytes: Buffer }>('SELECT sha256, bytes FROM recollect.blobs WHERE team = $1 AND sha256 = ANY($2::text[])', [team, part]);
    for (const row of r.rows) {
      if (row.bytes.length > POOL_BLOB_MAX || createHash('sha256').update(row.bytes).digest('hex') !== row.sha256) continue;
      // Plain files, as the archiving machine keeps them: chapters_search hands out their paths.
      blobs.putReadable(row.bytes);
      got++;
    }
  }
  return got;
}
