import { createHash, webcrypto } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompress, brotliDecompressSync, constants as zlibConstants } from 'node:zlib';

/**
 * Snapshot frame version 2 (read, no longer written: this build writes version 3, pagedFrame.ts,
 * whose small chunks are read on demand): the database cut into chunks compressed independently, so that an
 * open decompresses them side by side on libuv's thread pool instead of one long brotli stream
 * on one core (decompression was ~70% of a cold open at 224 MB).
 *
 *   magic 'RCLSNAP\x02' | u64 database size | u32 chunk size | u32 chunk count
 *   | per chunk: u32 compressed length, SHA-256 of the compressed bytes
 *   | SHA-256 of everything before it | the chunks, in order
 *
 * Every byte of the file is under a hash (the header under its own), so a torn or flipped file
 * is caught before sql.js sees it, as with version 1's single hash.
 */
export const CHUNKED_MAGIC = Buffer.from('RCLSNAP\x02', 'latin1');
/**
 * 16 MB: on the bench's 224 MB database, 8 MB chunks cost 3.3% more bytes than one stream, 16 MB
 * 1.8%, 32 MB 0.8%; 16 MB still gives 14 chunks to spread over the cores a user has.
 */
export const CHUNK_BYTES = 16 * 1024 * 1024;

/**
 * Chunks pay off only where cores are free to take them: each costs its own output buffer and a
 * copy into the database's (~35% more CPU than one stream at 224 MB, measured). On the 2-core
 * bench machine, busy with other work, that made the open slower, so a machine with at most two
 * cores writes the database as one chunk, which is decoded straight into its final buffer as
 * version 1 was. The reader handles either; the count is in the header.
 */
export function chunkBytesFor(size: number, cores = availableParallelism()): number {
  return cores > 2 ? CHUNK_BYTES : Math.max(1, Math.min(size, 0xffffffff));
}
const FIXED = CHUNKED_MAGIC.length + 8 + 4 + 4;
const ENTRY = 4 + 32;
const HASH = 32;

/**
 * Quality 4 as version 1. Several chunks get a 4 MB window instead of 16 MB: each chunk's decoder
 * allocates a ring buffer of the window's size, fresh memory whose page faults showed up in the
 * open; on the bench's 224 MB database (16 MB chunks) that cost 0.6% more bytes and saved ~15%
 * of the decompression CPU. A single chunk keeps the 16 MB window (one ring buffer).
 */
function brotliOptions(size: number, single: boolean) {
  return { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4, [zlibConstants.BROTLI_PARAM_LGWIN]: single ? 24 : 22, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: size } };
}

const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

function pieces(data: Uint8Array, chunkBytes: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += chunkBytes) out.push(data.subarray(at, Math.min(data.length, at + chunkBytes)));
  return out;
}

function assemble(size: number, chunkBytes: number, compressed: Buffer[]): Buffer {
  return Buffer.concat([frameHeader(CHUNKED_MAGIC, size, chunkBytes, compressed.map((c) => ({ length: c.length, hash: sha256(c) }))), ...compressed]);
}

/**
 * The header versions 2 and 3 share (magic, database size, chunk size, chunk count, each chunk's
 * length and SHA-256, then the hash of all that), for chunks already compressed and hashed.
 */
export function frameHeader(magic: Buffer, size: number, chunkBytes: number, chunks: readonly { length: number; hash: Uint8Array }[]): Buffer {
  const header = Buffer.alloc(FIXED + chunks.length * ENTRY + HASH);
  magic.copy(header, 0);
  header.writeBigUInt64LE(BigInt(size), magic.length);
  header.writeUInt32LE(chunkBytes, magic.length + 8);
  header.writeUInt32LE(chunks.length, magic.length + 12);
  chunks.forEach((c, i) => {
    const at = FIXED + i * ENTRY;
    header.writeUInt32LE(c.length, at);
    header.set(c.hash, at + 4);
  });
  const hashAt = header.length - HASH;
  sha256(header.subarray(0, hashAt)).copy(header, hashAt);
  return header;
}

export function encodeChunkedSync(data: Uint8Array, chunkBytes = chunkBytesFor(data.length)): Buffer {
  const parts = pieces(data, chunkBytes);
  return assemble(data.length, chunkBytes, parts.map((p) => brotliCompressSync(p, brotliOptions(p.length, parts.length === 1))));
}

const compressAsync = promisify(brotliCompress);

/**
 * Compresses on the thread pool, `parallel` chunks at a time: an idle checkpoint should not
 * take every pool thread from the file reads the host does meanwhile.
 */
export async function encodeChunked(data: Uint8Array, parallel = 2, chunkBytes = chunkBytesFor(data.length)): Promise<Buffer> {
  const parts = pieces(data, chunkBytes);
  const out: Buffer[] = new Array<Buffer>(parts.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < parts.length; i = next++) {
      const p = parts[i] as Uint8Array;
      out[i] = await compressAsync(p, brotliOptions(p.length, parts.length === 1));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, parts.length)) }, worker));
  return assemble(data.length, chunkBytes, out);
}

interface Layout {
  size: number;
  chunks: { payload: Buffer; hash: Buffer; rawAt: number; rawLength: number }[];
}

/** Reads and checks the header; throws (a plain Error) on anything inconsistent. */
function layout(data: Buffer): Layout {
  if (data.length < FIXED + HASH) throw new Error(`only ${data.length} bytes, shorter than the frame header`);
  const size = Number(data.readBigUInt64LE(CHUNKED_MAGIC.length));
  const chunkBytes = data.readUInt32LE(CHUNKED_MAGIC.length + 8);
  const count = data.readUInt32LE(CHUNKED_MAGIC.length + 12);
  const headerLength = FIXED + count * ENTRY + HASH;
  if (headerLength > data.length) throw new Error(`the header lists ${count} chunks, more than ${data.length} bytes can hold`);
  if (!sha256(data.subarray(0, headerLength - HASH)).equals(data.subarray(headerLength - HASH, headerLength))) throw new Error('the checksum does not match (header)');
  if (chunkBytes === 0 || count !== Math.ceil(size / chunkBytes)) throw new Error(`${count} chunks of ${chunkBytes} bytes cannot hold ${size} bytes`);
  const chunks: Layout['chunks'] = [];
  let at = headerLength;
  for (let i = 0; i < count; i++) {
    const entry = FIXED + i * ENTRY;
    const length = data.readUInt32LE(entry);
    if (at + length > data.length) throw new Error(`chunk ${i} ends at byte ${at + length}, past the file's ${data.length}`);
    const rawAt = i * chunkBytes;
    chunks.push({ payload: data.subarray(at, at + length), hash: data.subarray(entry + 4, entry + ENTRY), rawAt, rawLength: Math.min(chunkBytes, size - rawAt) });
    at += length;
  }
  if (at !== data.length) throw new Error(`the chunks end at byte ${at} but the file has ${data.length}`);
  return { size, chunks };
}

function checkHash(chunk: Layout['chunks'][number], i: number, digest: Uint8Array = sha256(chunk.payload)): void {
  if (!chunk.hash.equals(digest)) throw new Error(`the checksum does not match (chunk ${i})`);
}

function checkLength(chunk: Layout['chunks'][number], i: number, raw: Buffer): Buffer {
  if (raw.length !== chunk.rawLength) throw new Error(`chunk ${i} decompressed to ${raw.length} bytes, the frame says ${chunk.rawLength}`);
  return raw;
}

/**
 * Where the chunks land: a single chunk's output is the database itself (zlib gave it memory of
 * its own, so sql.js may adopt it); several are copied into one buffer, likewise its own.
 */
function collector(size: number, count: number): { place(chunk: Layout['chunks'][number], raw: Buffer): void; result(): Buffer } {
  let out: Buffer | undefined = count === 1 ? undefined : Buffer.allocUnsafeSlow(size);
  return {
    place(chunk, raw) {
      if (out) raw.copy(out, chunk.rawAt);
      else out = raw;
    },
    result: () => out ?? Buffer.alloc(0),
  };
}

/** Output bounded to the stated size: a damaged stream cannot make zlib allocate without limit. */
const decompressOptions = (rawLength: number) => ({ chunkSize: Math.max(64, rawLength), maxOutputLength: Math.max(1, rawLength) });

export function decodeChunkedSync(data: Buffer): Buffer {
  const { size, chunks } = layout(data);
  const out = collector(size, chunks.length);
  chunks.forEach((c, i) => {
    checkHash(c, i);
    out.place(c, checkLength(c, i, brotliDecompressSync(c.payload, decompressOptions(c.rawLength))));
  });
  return out.result();
}

const decompressAsync = promisify(brotliDecompress);

/**
 * Every chunk's hash and decompression go to the thread pool at once (WebCrypto's digest runs
 * there too), so this thread only copies finished chunks into place; a damaged chunk only wastes
 * its decompression, the result is thrown away with an error.
 */
export async function decodeChunked(data: Buffer): Promise<Buffer> {
  const { size, chunks } = layout(data);
  const out = collector(size, chunks.length);
  const jobs = chunks.map(async (c, i) => {
    const digest = webcrypto.subtle.digest('SHA-256', c.payload);
    const raw = decompressAsync(c.payload, decompressOptions(c.rawLength));
    raw.catch(() => undefined); // a bad hash is the error to report, whatever brotli made of the bytes
    checkHash(c, i, new Uint8Array(await digest));
    out.place(c, checkLength(c, i, await raw));
  });
  // Settle all before throwing: no job may still be writing into the result after we return.
  const failed = (await Promise.allSettled(jobs)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
  return out.result();
}
