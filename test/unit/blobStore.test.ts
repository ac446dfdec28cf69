import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobStore, COMPRESSED_SUFFIX } from '../../src/core/store/blobStore';
import { tempHome } from './helpers/tempStore';

const home = tempHome('blobs');
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));
const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');
const text = Array.from({ length: 400 }, (_, i) => `line ${i}: {"entriesCount": ${i % 7}, "status": "ok"}`).join('\n');

describe('BlobStore at rest', () => {
  it('addresses compressible content by the hash of its original bytes and keeps it compressed', () => {
    const blobs = new BlobStore(path.join(home, 'a'));
    const h = blobs.put(text);
    expect(h).toBe(sha(text));
    expect(blobs.encodingOf(h)).toBe('brotli');
    expect(blobs.pathOf(h).endsWith(`${h}${COMPRESSED_SUFFIX}`)).toBe(true);
    expect(fs.statSync(blobs.pathOf(h)).size).toBeLessThan(Buffer.byteLength(text) / 4);
    expect(blobs.get(h)!.toString('utf8')).toBe(text);
    expect(blobs.put(text)).toBe(h);
    expect(blobs.has(h)).toBe(true);
  });

  it('keeps content that does not shrink as plain bytes, read back unchanged', () => {
    const blobs = new BlobStore(path.join(home, 'b'));
    const noise = randomBytes(64 * 1024);
    const h = blobs.put(noise);
    expect(blobs.encodingOf(h)).toBe('none');
    expect(fs.readFileSync(blobs.pathOf(h)).equals(noise)).toBe(true);
    expect(blobs.get(h)!.equals(noise)).toBe(true);
  });

  it('reads an old plain blob, even one whose bytes look like anything', () => {
    const blobs = new BlobStore(path.join(home, 'c'));
    // Plain bytes that happen to be valid brotli: the file name, not the content, decides.
    const tricky = brotliCompressSync(Buffer.from('a plain blob that is itself a brotli stream'));
    expect(brotliDecompressSync(tricky).toString()).toContain('plain blob');
    const h = sha(tricky);
    fs.mkdirSync(path.join(home, 'c', h.slice(0, 2)), { recursive: true });
    fs.writeFileSync(path.join(home, 'c', h.slice(0, 2), h), tricky);
    expect(blobs.encodingOf(h)).toBe('none');
    expect(blobs.get(h)!.equals(tricky)).toBe(true);
    expect(blobs.put(tricky)).toBe(h);
    expect(fs.existsSync(path.join(home, 'c', h.slice(0, 2), h + COMPRESSED_SUFFIX))).toBe(false);
  });

  it('writes a readable copy for a plain read by path, beside a compressed one of the same hash', () => {
    const blobs = new BlobStore(path.join(home, 'd'));
    const h = blobs.put(text);
    expect(blobs.putReadable(text)).toBe(h);
    expect(fs.readFileSync(blobs.pathOf(h), 'utf8')).toBe(text);
    expect(blobs.encodingOf(h)).toBe('none');
    expect(blobs.get(h)!.toString('utf8')).toBe(text);
  });

  it('maps a path back to its hash only inside the store, in either form', () => {
    const blobs = new BlobStore(path.join(home, 'e'));
    const h = blobs.put(text);
    expect(blobs.hashOfPath(blobs.pathOf(h))).toBe(h);
    expect(blobs.hashOfPath(blobs.pathOf(h).slice(0, -COMPRESSED_SUFFIX.length))).toBe(h);
    expect(blobs.hashOfPath(path.join(home, h))).toBeUndefined();
    expect(blobs.hashOfPath(path.join(home, 'e', h.slice(0, 2), `${h}.gz`))).toBeUndefined();
    expect(blobs.get('../../etc/passwd')).toBeUndefined();
  });
});
