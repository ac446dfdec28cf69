import { createHash } from 'node:crypto';
import type { Operation } from '../../store/journal';
import { queryScalar, type Database } from '../../store/sqlite';

/**
 * Vectors an embedding provider returned, kept so a search embeds only its query. The vectors
 * themselves sit in one content-addressed blob per batch (float32, little-endian, back to
 * back): a journal line of tens of thousands of floats would make every process's replay
 * parse megabytes of JSON. The line names the blob and which key sits at which position.
 */
export interface EmbeddingsStored extends Operation {
  op: 'memory.embeddings.stored';
  model: string;
  dims: number;
  blob: string;
  items: { key: string; textHash: string }[];
}

/** What an embedding key stands for: an entry, one chunk of a note, or a fact's value. */
export function embeddingText(db: Database, key: string): string | undefined {
  let v: unknown;
  if (key.startsWith('entry:')) v = queryScalar(db, 'SELECT text FROM notes WHERE id = ?', [key]);
  else if (key.startsWith('fact:')) v = queryScalar(db, "SELECT subject || ' ' || predicate || ' ' || object FROM facts WHERE id = ?", [key.slice(5)]);
  else {
    const m = /^chunk:(.+):(\d+)$/.exec(key);
    if (m) v = queryScalar(db, 'SELECT text FROM note_chunks WHERE file_id = ? AND seq = ?', [m[1] as string, Number(m[2])]);
  }
  return typeof v === 'string' ? v : undefined;
}

export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function applyEmbeddingsStored(db: Database, op: Operation): void {
  const e = op as EmbeddingsStored;
  e.items.forEach((item, idx) => {
    // The text may have been edited between the embedding call and this line: a vector for
    // the old text would answer for words no longer there, so it is dropped.
    const text = embeddingText(db, item.key);
    if (text === undefined || textHash(text) !== item.textHash) return;
    db.run('INSERT OR REPLACE INTO embeddings(key, model, text_hash, blob, idx, dims) VALUES (?, ?, ?, ?, ?, ?)', [item.key, e.model, item.textHash, e.blob, idx, e.dims]);
  });
}

export const semanticAppliers = {
  'memory.embeddings.stored': applyEmbeddingsStored,
};
