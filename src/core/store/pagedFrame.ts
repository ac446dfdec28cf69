import { createHash, webcrypto } from 'node:crypto';
import * as fs from 'node:fs';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompress, brotliDecompressSync, constants as zlibConstants, createBrotliDecompress } from 'node:zlib';
import { readFully } from './fileWrites';

/**
 * The snapshot's one format: the database cut into small chunks, each compressed on its own and
 * found by its place in a table, so an open reads only the header and SQLite pulls in the chunks
 * a query touches (pagedContents.ts).
 *
 *   'RCLSNAP' | u8 format version (3) | u64 database size | u32 chunk size | u32 chunk count
 *   | per chunk: u32 compressed length, SHA-256 of the compressed bytes
 *   | SHA-256 of everything before it | the chunks, in order
 *
 * The header is checked when the file is opened and each chunk's hash when it is first read, so
 * no byte reaches SQLite unverified; a damaged chunk found later is an I/O error, not data. A file
 * of any other version is refused (snapshot.ts): versions 1 and 2 were earlier, unreleased builds'.
 */
export const SNAPSHOT_TAG = 'RCLSNAP';
export const SNAPSHOT_VERSION = 3;
export const PAGED_MAGIC = Buffer.from(SNAPSHOT_TAG + String.fromCharCode(SNAPSHOT_VERSION), 'latin1');

/**
 * 256 KB, as a compacted snapshot has (compactionJob.ts). Smaller chunks load less for a query
 * that touches a few pages, but compress worse because brotli's window cannot reach across them;
 * on the 100 MB import store's 76 MB database (quality 4, relative to one stream): 64 KB 1.85×,
 * 256 KB 1.53×, 1 MB 1.27×. What decides is the store that is not compacted (one larger than the
 * budget lets compaction copy): its tables and FTS segments lie all over the file, so a search
 * reads a page or two from each of many chunks, and under a cache smaller than the database each
 * of them is decompressed again on every call. A quarter of the chunk is a quarter of that work,
 * and four times as many of them fit the same cache (docs/performance.md, "Scale").
 */
export const PAGED_CHUNK_BYTES = 256 * 1024;
const QUALITY = 5;

const FIXED = PAGED_MAGIC.length + 8 + 4 + 4;
const ENTRY = 4 + 32;
const HASH = 32;

export interface ChunkEntry {
  /** Where the compressed bytes start in the file. */
  at: number;
  length: number;
  hash: Buffer;
}

export const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

/**
 * A brotli window as large as the input and no larger: the encoder and each decoder allocate
 * memory in proportion to the window, and the default (4 MB) on a small input is memory that
 * malloc keeps resident after it is freed (chunkSlots.ts).
 */
export const fittedWindow = (size: number): number => Math.max(16, Math.min(24, Math.ceil(Math.log2(Math.max(1, size)))));

const compressOptions = (size: number) => ({
  params: {
    [zlibConstants.BROTLI_PARAM_QUALITY]: QUALITY,
    [zlibConstants.BROTLI_PARAM_LGWIN]: fittedWindow(size),
    [zlibConstants.BROTLI_PARAM_SIZE_HINT]: size,
  },
});

export function compressChunkSync(raw: Uint8Array): Buffer {
  return brotliCompressSync(raw, compressOptions(raw.length));
}

const compressAsync = promisify(brotliCompress);
const decompressAsync = promisify(brotliDecompress);
const readAsync = (fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number> =>
  new Promise((resolve, reject) => fs.read(fd, buf, offset, length, position, (err, n) => (err ? reject(err) : resolve(n))));
export function compressChunk(raw: Uint8Array): Promise<Buffer> {
  return compressAsync(raw, compressOptions(raw.length));
}

/** The header for chunks already compressed (their hashes given, so copied chunks are not rehashed). */
export function pagedHeader(size: number, chunkBytes: number, chunks: readonly { length: number; hash: Uint8Array }[]): Buffer {
  const header = Buffer.alloc(FIXED + chunks.length * ENTRY + HASH);
  PAGED_MAGIC.copy(header, 0);
  header.writeBigUInt64LE(BigInt(size), PAGED_MAGIC.length);
  header.writeUInt32LE(chunkBytes, PAGED_MAGIC.length + 8);
  header.writeUInt32LE(chunks.length, PAGED_MAGIC.length + 12);
  chunks.forEach((c, i) => {
    const at = FIXED + i * ENTRY;
    header.writeUInt32LE(c.length, at);
    header.set(c.hash, at + 4);
  });
  const hashAt = header.length - HASH;
  sha256(header.subarray(0, hashAt)).copy(header, hashAt);
  return header;
}

/** A whole database (an export, a rebuilt store) as a snapshot, its parts in file order. */
export async function encodePaged(data: Uint8Array, parallel = 2, chunkBytes = PAGED_CHUNK_BYTES): Promise<Buffer[]> {
  const count = Math.ceil(data.length / chunkBytes);
  const out = new Array<Buffer>(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) out[i] = await compressChunk(data.subarray(i * chunkBytes, Math.min(data.length, (i + 1) * chunkBytes)));
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, count)) }, worker));
  return [pagedHeader(data.length, chunkBytes, out.map((c) => ({ length: c.length, hash: sha256(c) }))), ...out];
}

export function encodePagedSync(data: Uint8Array, chunkBytes = PAGED_CHUNK_BYTES): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += chunkBytes) out.push(compressChunkSync(data.subarray(at, Math.min(data.length, at + chunkBytes))));
  return [pagedHeader(data.length, chunkBytes, out.map((c) => ({ length: c.length, hash: sha256(c) }))), ...out];
}

/** `length` bytes of a snapshot at `position`; throws where the file ends first. */
export function readExactly(fd: number, length: number, position: number): Buffer {
  return readExactlyInto(Buffer.allocUnsafe(length), fd, length, position);
}

/** `length` bytes at `position` into the start of `buf`; returns that part of it. */
function readExactlyInto(into: Buffer, fd: number, length: number, position: number): Buffer {
  const buf = into.subarray(0, length);
  const done = readFully(fd, buf, position);
  if (done < length) throw new Error(`the file ends at byte ${position + done}, ${length - done} bytes short of a chunk`);
  return buf;
}

/**
 * An open snapshot file. The descriptor stays open for the life of the database: a checkpoint
 * by another process renames a new file over the path, and this one keeps reading the file it
 * opened, whose chunks match the header it checked.
 */
export class PagedFrame {
  private closed = false;
  private reading = 0;

  private constructor(
    readonly file: string,
    private readonly fd: number,
    readonly size: number,
    readonly chunkBytes: number,
    readonly entries: readonly ChunkEntry[],
    /** The header's own hash: names this exact file, so a writer can tell its file from another's. */
    readonly headerHash: Buffer,
  ) {}

  /** No file yet (a new store, a rebuild): every chunk is new, and the first checkpoint writes the file. */
  static none(file: string, chunkBytes = PAGED_CHUNK_BYTES): PagedFrame {
    const frame = new PagedFrame(file, -1, 0, chunkBytes, [], Buffer.alloc(HASH));
    frame.closed = true;
    return frame;
  }

  /** Reads and checks the header of the file open at `fd` (which it then owns); throws a plain Error describing damage. */
  static fromFd(file: string, fd: number): PagedFrame {
    const fileSize = fs.fstatSync(fd).size;
    if (fileSize < FIXED + HASH) throw new Error(`only ${fileSize} bytes, shorter than the frame header`);
    const fixed = readExactly(fd, FIXED, 0);
    const size = Number(fixed.readBigUInt64LE(PAGED_MAGIC.length));
    const chunkBytes = fixed.readUInt32LE(PAGED_MAGIC.length + 8);
    const count = fixed.readUInt32LE(PAGED_MAGIC.length + 12);
    const headerLength = FIXED + count * ENTRY + HASH;
    if (headerLength > fileSize) throw new Error(`the header lists ${count} chunks, more than ${fileSize} bytes can hold`);
    const header = readExactly(fd, headerLength, 0);
    const headerHash = header.subarray(headerLength - HASH);
    if (!sha256(header.subarray(0, headerLength - HASH)).equals(headerHash)) throw new Error('the checksum does not match (header)');
    if (chunkBytes === 0 || count !== Math.ceil(size / chunkBytes)) throw new Error(`${count} chunks of ${chunkBytes} bytes cannot hold ${size} bytes`);
    const entries: ChunkEntry[] = [];
    let at = headerLength;
    for (let i = 0; i < count; i++) {
      const e = FIXED + i * ENTRY;
      const length = header.readUInt32LE(e);
      if (at + length > fileSize) throw new Error(`chunk ${i} ends at byte ${at + length}, past the file's ${fileSize}`);
      entries.push({ at, length, hash: header.subarray(e + 4, e + ENTRY) });
      at += length;
    }
    if (at !== fileSize) throw new Error(`the chunks end at byte ${at} but the file has ${fileSize}`);
    return new PagedFrame(file, fd, size, chunkBytes, entries, Buffer.from(headerHash));
  }

  get count(): number {
    return this.entries.length;
  }

  rawLength(i: number): number {
    return Math.min(this.chunkBytes, this.size - i * this.chunkBytes);
  }

  private entry(i: number): ChunkEntry {
    const e = this.entries[i];
    if (!e) throw new Error(`chunk ${i} is past the frame's ${this.entries.length}`);
    return e;
  }

  /** The chunk's compressed bytes, checked against its hash. */
  readCompressed(i: number): Buffer {
    if (this.closed) throw new Error('the snapshot file was closed');
    const e = this.entry(i);
    const payload = readExactly(this.fd, e.length, e.at);
    if (!sha256(payload).equals(e.hash)) throw new Error(`the checksum does not match (chunk ${i})`);
    return payload;
  }

  /**
   * The chunk's database bytes; throws when the chunk is damaged. The compressed bytes are read
   * into one buffer kept for the purpose: under a memory budget chunks are loaded again and again,
   * and a fresh buffer per load is garbage the collector frees only in large steps.
   */
  load(i: number, into?: Buffer): Buffer {
    if (this.closed) throw new Error('the snapshot file was closed');
    const e = this.entry(i);
    if (this.scratch.length < e.length) this.scratch = Buffer.allocUnsafeSlow(Math.max(e.length, 2 * this.scratch.length));
    const payload = readExactlyInto(this.scratch, this.fd, e.length, e.at);
    if (!sha256(payload).equals(e.hash)) throw new Error(`the checksum does not match (chunk ${i})`);
    const reused = into && into.length >= this.rawLength(i) ? decompressInto(payload, into, this.rawLength(i)) : undefined;
    return this.checkLength(i, reused ?? brotliDecompressSync(payload, this.decompressOptions(i)));
  }

  private scratch = Buffer.alloc(0);

  /**
   * The same with the read, hash and decompression on the thread pool; undefined when the frame
   * was closed meanwhile. Rejects when the chunk is damaged.
   */
  async loadInBackground(i: number): Promise<Buffer | undefined> {
    const e = this.entry(i);
    const payload = await this.readInBackground(e);
    if (!payload) return undefined;
    const digest = new Uint8Array(await webcrypto.subtle.digest('SHA-256', payload));
    if (!e.hash.equals(digest)) throw new Error(`the checksum does not match (chunk ${i})`);
    return this.checkLength(i, await decompressAsync(payload, this.decompressOptions(i)));
  }

  /** Output bounded to the stated size: a damaged stream cannot make zlib allocate without limit. */
  private decompressOptions(i: number) {
    const raw = this.rawLength(i);
    return { chunkSize: Math.max(64, raw), maxOutputLength: Math.max(1, raw) };
  }

  private checkLength(i: number, out: Buffer): Buffer {
    if (out.length !== this.rawLength(i)) throw new Error(`chunk ${i} decompressed to ${out.length} bytes, the frame says ${this.rawLength(i)}`);
    return out;
  }

  /** A read on the thread pool; the descriptor is only closed once no such read is in flight, so its number is never reused under one. */
  private async readInBackground(e: ChunkEntry): Promise<Buffer | undefined> {
    if (this.closed) return undefined;
    this.reading++;
    try {
      const buf = Buffer.allocUnsafe(e.length);
      let done = 0;
      while (done < e.length) {
        const n = await readAsync(this.fd, buf, done, e.length - done, e.at + done);
        if (n === 0) break;
        done += n;
      }
      return this.closed ? undefined : buf.subarray(0, done);
    } finally {
      if (--this.reading === 0 && this.closed) fs.closeSync(this.fd);
    }
  }

  /** Whether `fd` is open on the very file this frame reads. */
  sameFileAs(fd: number): boolean {
    if (this.closed) return false;
    const other = fs.fstatSync(fd);
    const mine = fs.fstatSync(this.fd);
    return other.ino === mine.ino && other.dev === mine.dev;
  }

  /** Whether `file` still names the file this frame reads (no checkpoint renamed another over it). */
  isAt(file: string): boolean {
    if (this.closed) return false;
    try {
      const here = fs.statSync(file);
      const mine = fs.fstatSync(this.fd);
      return here.ino === mine.ino && here.dev === mine.dev;
    } catch {
      return false;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.reading === 0) fs.closeSync(this.fd);
  }
}

/** The legacy synchronous entry of Node's zlib streams, and the output buffer it writes into. */
interface SyncEngine {
  _outBuffer: Buffer;
  _outOffset: number;
  _chunkSize: number;
  _processChunk(chunk: Buffer, flushFlag: number): Buffer;
  close(): void;
}

/**
 * Decompresses a chunk into `into` (an evicted chunk's buffer), returning the first `raw` bytes
 * written there. Under a budget chunks are evicted and loaded again hundreds of times a search;
 * a new 1 MB buffer per load (and zlib's second one, allocated to look for more output) is freed
 * only when V8 next collects, and glibc keeps such freed blocks in its arenas instead of giving
 * them back, so the process's resident memory grew with every load far past the cache's share.
 * Node's zlib has no public way to name the output buffer; its synchronous path writes into the
 * engine's `_outBuffer`. Should a Node build not do so, the output is copied into `into`; should it
 * lack that entry, `undefined` sends the caller to the public path. The bytes are the same either way.
 */
function decompressInto(payload: Buffer, into: Buffer, raw: number): Buffer | undefined {
  const engine = createBrotliDecompress({ chunkSize: 64, maxOutputLength: Math.max(1, raw) }) as unknown as SyncEngine;
  // A Node build without the legacy entry gets the public path (a fresh buffer) instead of a failed read.
  if (typeof engine._processChunk !== 'function') {
    engine.close();
    return undefined;
  }
  try {
    engine._outBuffer = into.subarray(0, raw);
    engine._outOffset = 0;
    // How much zlib may write into `_outBuffer`; once it is full zlib allocates (never fills) one more to see whether more output follows.
    engine._chunkSize = raw;
    const out = engine._processChunk(payload, zlibConstants.BROTLI_OPERATION_FINISH);
    if (out.buffer === into.buffer && out.byteOffset === into.byteOffset) return out;
    if (out.length > into.length) return out; // checkLength refuses it
    out.copy(into);
    return into.subarray(0, out.length);
  } finally {
    engine.close();
  }
}
