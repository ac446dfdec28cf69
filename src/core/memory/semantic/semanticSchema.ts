import { createHash } from 'node:crypto';
import type { Operation } from '../../store/journal';
import { queryScalar, type Database } from '../../store/sqlite';
import { VECTOR_ENCODING } from './vectorCodec';

/**
 * Vectors a model returned, kept so a search embeds only its query and an open never
 * recomputes them. The vectors sit in one content-addressed blob per batch (vectorCodec.ts):
 * a journal line of tens of thousands of numbers would make every process's replay parse
 * megabytes of JSON. The line names the blob and which key sits at which position.
 */
export interface EmbeddingsStored extends Operation {
  op: 'memory.embeddings.stored';
  model: string;
  dims: number;
  encoding: typeof VECTOR_ENCODING;
  blob: string;
  items: { key: string; textHash: string }[];
}

/** Which recall a vector serves: memories (entries, note chunks, facts) or imported chat history. */
export type Corpus = 'memory' | 'history';

export function corpusOf(key: string): Corpus {
  return key.startsWith('event:') ? 'history' : 'memory';
}

/**
 * One row per stored vector; a key embedded again gets a newer row and the older one is
 * deleted, so rows only ever grow in `id` (AUTOINCREMENT: ids are never reused) and a reader
 * can take just the rows past the last id it saw. `embeddings_gone` counts every key that
 * lost its vector (a retired or re-indexed memory), the one change a reader cannot see by id.
 * The float32 rows of earlier builds are dropped: the vectors are derived and are recomputed.
 */
export const EMBEDDINGS_MIGRATION = `
  DROP TABLE IF EXISTS embeddings;
  CREATE TABLE embeddings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    corpus TEXT NOT NULL,
    key TEXT NOT NULL,
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    blob TEXT NOT NULL,
    idx INTEGER NOT NULL,
    dims INTEGER NOT NULL
  );
  CREATE INDEX embeddings_by_key ON embeddings(key, model);
  CREATE INDEX embeddings_by_corpus ON embeddings(model, corpus, id);
  CREATE TABLE embeddings_gone (n INTEGER NOT NULL);
  INSERT INTO embeddings_gone VALUES (0);
  CREATE TRIGGER embeddings_key_gone AFTER DELETE ON embeddings
    WHEN NOT EXISTS (SELECT 1 FROM embeddings WHERE key = OLD.key AND model = OLD.model AND id > OLD.id)
    BEGIN UPDATE embeddings_gone SET n = n + 1; END;
`;

/**
 * `facts_superseded_log` names each fact whose superseded state changed (a value superseded,
 * one recorded already superseded by a later one), in order, so the vector cache updates which
 * of its vectors are superseded facts from the rows past the last it read, without reading the
 * facts again (vectorCache.ts). Facts are never deleted, and superseded_at is never cleared.
 */
export const SUPERSEDED_LOG_MIGRATION = `
  CREATE TABLE facts_superseded_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, fact_id TEXT NOT NULL);
  CREATE TRIGGER facts_superseded_updated AFTER UPDATE OF superseded_at ON facts
    WHEN (OLD.superseded_at IS NULL) <> (NEW.superseded_at IS NULL)
    BEGIN INSERT INTO facts_superseded_log(fact_id) VALUES (NEW.id); END;
  CREATE TRIGGER facts_superseded_inserted AFTER INSERT ON facts WHEN NEW.superseded_at IS NOT NULL
    BEGIN INSERT INTO facts_superseded_log(fact_id) VALUES (NEW.id); END;
`;

/** What an embedding key stands for: an entry, one chunk of a note, a fact's value, or a chat event. */
export function embeddingText(db: Database, key: string): string | undefined {
  let v: unknown;
  if (key.startsWith('entry:')) v = queryScalar(db, 'SELECT text FROM notes WHERE id = ?', [key]);
  else if (key.startsWith('fact:')) v = queryScalar(db, "SELECT subject || ' ' || predicate || ' ' || object FROM facts WHERE id = ?", [key.slice(5)]);
  else if (key.startsWith('event:')) v = queryScalar(db, 'SELECT text FROM events WHERE id = ?', [Number(key.slice(6))]);
  else {
    const m = /^chunk:(.+):(\d+)$/.exec(key);
    if (m) v = queryScalar(db, 'SELECT text FROM note_chunks WHERE file_id = ? AND seq = ?', [m[1] as string, Number(m[2])]);
  }
  return typeof v === 'string' ? v : undefined;
}

export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** The hash a vector for `key` must carry to stand for its text now: a chat event has its own content hash. */
export function currentHash(db: Database, key: string): string | undefined {
  if (key.startsWith('event:')) {
    const h = queryScalar(db, 'SELECT hash FROM events WHERE id = ?', [Number(key.slice(6))]);
    return typeof h === 'string' ? h : undefined;
  }
  const text = embeddingText(db, key);
  return text === undefined ? undefined : textHash(text);
}

function applyEmbeddingsStored(db: Database, op: Operation): void {
  const e = op as EmbeddingsStored;
  // Lines of the float32 form earlier builds wrote are not read: those vectors are recomputed.
  if (e.encoding !== VECTOR_ENCODING) return;
  e.items.forEach((item, idx) => {
    // The text may have changed between the embedding call and this line: a vector for the
    // old text would answer for words no longer there, so it is dropped.
    if (currentHash(db, item.key) !== item.textHash) return;
    db.run('INSERT INTO embeddings(corpus, key, model, text_hash, blob, idx, dims) VALUES (?, ?, ?, ?, ?, ?, ?)', [corpusOf(item.key), item.key, e.model, item.textHash, e.blob, idx, e.dims]);
    db.run('DELETE FROM embeddings WHERE key = ? AND model = ? AND id < last_insert_rowid()', [item.key, e.model]);
  });
}

export const semanticAppliers = {
  'memory.embeddings.stored': applyEmbeddingsStored,
};
