import * as fs from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../../src/core/services';
import { COMPRESSED_SUFFIX } from '../../../src/core/store/blobStore';
import { queryRows } from '../../../src/core/store/sqlite';
import { invokeTool } from '../../../src/core/tools/invoke';
import { findTool } from '../../../src/core/tools/registry';
import { BLOB_PATTERN_CASES, bruteForce, bruteRanked } from './grepReference';
import { importedFixtures } from './lcmFixture';

/**
 * A store holds both kinds of blob file: compressed (`.br`), and plain for content that does not
 * shrink by a tenth (blobStore.ts). lcm_grep checks a blob's bytes for the pattern's literals before it
 * decodes the text, so it must find exactly what a scan of every text finds whichever form a
 * blob is in.
 */

let s: Services;
let originals: Map<string, string>;
let plainOnes: string[];
beforeAll(async () => {
  s = await importedFixtures();
  const hashes = queryRows(s.store.db, 'SELECT DISTINCT blob FROM events WHERE blob IS NOT NULL ORDER BY blob').map((r) => String(r.blob));
  originals = new Map();
  for (const h of hashes) {
    // Read the file itself, not through the store, so the store's decoding is checked too.
    const file = s.store.blobs.pathOf(h);
    expect(file.endsWith(COMPRESSED_SUFFIX), file).toBe(true);
    originals.set(h, brotliDecompressSync(fs.readFileSync(file)).toString('utf8'));
  }
  // Every other blob in the plain form: its bytes under the bare hash.
  plainOnes = hashes.filter((_, i) => i % 2 === 0);
  for (const h of plainOnes) {
    const packed = s.store.blobs.pathOf(h);
    fs.writeFileSync(packed.slice(0, -COMPRESSED_SUFFIX.length), originals.get(h)!);
    fs.rmSync(packed);
  }
});
afterAll(() => s.store.close());

describe('lcm_describe of a stored file', () => {
  it('names the file that holds it and says whether that file is compressed', async () => {
    const files = queryRows(s.store.db, 'SELECT id, blob FROM lcm_files ORDER BY id').map((r) => ({ id: String(r.id), blob: String(r.blob) }));
    const seen = new Set<string>();
    for (const f of files) {
      const d = (await invokeTool(findTool('lcm_describe')!, { id: f.id, allConversations: true }, s, { client: 'test' })) as { ok: boolean; content: string; storagePath: string; storageEncoding: string };
      expect(d.ok).toBe(true);
      const onDisk = fs.readFileSync(d.storagePath);
      expect((d.storageEncoding === 'brotli' ? brotliDecompressSync(onDisk) : onDisk).toString('utf8'), f.id).toBe(d.content);
      expect(d.storagePath.endsWith(COMPRESSED_SUFFIX)).toBe(d.storageEncoding === 'brotli');
      seen.add(d.storageEncoding);
    }
    expect(seen.size).toBeGreaterThan(0);
  });
});

describe('lcm_grep over compressed and old plain blobs in one store', () => {
  it('holds both forms and reads each back as the original text', () => {
    expect(plainOnes.length).toBeGreaterThan(0);
    expect(originals.size - plainOnes.length).toBeGreaterThan(0);
    for (const [h, text] of originals) {
      expect(s.store.blobs.encodingOf(h)).toBe(plainOnes.includes(h) ? 'none' : 'brotli');
      expect(s.store.blobs.get(h)!.toString('utf8')).toBe(text);
    }
  });

  it('finds exactly the matches of a scan of every text, in every order', async () => {
    const cases = BLOB_PATTERN_CASES;
    const reached = new Set<string>();
    for (const [pattern, re] of cases) {
      const expected = bruteForce(s, re, 'messages');
      expect(expected.size, pattern).toBeGreaterThan(0);
      for (const sort of ['recency', 'relevance'] as const) {
        const r = (await invokeTool(findTool('lcm_grep')!, { pattern, scope: 'messages', allConversations: true, limit: 200, sort }, s, { client: 'test' })) as { ok: boolean; matches: { id: number }[] };
        expect(r.ok).toBe(true);
        if (expected.size <= 200) expect(new Set(r.matches.map((m) => m.id)), `${pattern} ${sort}`).toEqual(expected);
        if (sort === 'relevance') expect(r.matches.map((m) => m.id), pattern).toEqual(bruteRanked(s, re, 'messages').slice(0, 200));
        for (const m of r.matches) {
          const blob = queryRows(s.store.db, 'SELECT blob FROM events WHERE id = ?', [m.id])[0]?.blob;
          if (typeof blob === 'string') reached.add(s.store.blobs.encodingOf(blob) ?? 'missing');
        }
      }
    }
    // The cases reach into blobs of both forms, not only inline texts.
    expect([...reached].sort()).toEqual(['brotli', 'none']);
  });
});
