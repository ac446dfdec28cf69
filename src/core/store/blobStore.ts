import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { fittedWindow } from './pagedFrame';
import { brotliCompress, brotliCompressSync, brotliDecompressSync, constants as zlibConstants } from 'node:zlib';
import { promisify } from 'node:util';
import { replaceFileDurably } from './durableFile';
import { FolderSyncs, replaceFileDurablyInBackground } from './durableFileAsync';
import { asRefusedWrite, FOLDER_MODE } from './fileWrites';

/**
 * Brotli quality for blobs at rest. Measured on the 100 MB bench's 1,925 blobs (18.1 MB):
 * q5 stores 3.91 MB (4.6×) at ~30 MB/s, q6 3.88 MB, q4 4.21 MB, q9 3.86 MB at 2 MB/s, gzip -6
 * 4.13 MB; q5 reads back at ~100–200 MB/s on a shared 2-core machine.
 */
const BROTLI_QUALITY = 5;
/** A compressed copy that saves less than this share is not worth the decoding on every read. */
const MIN_SAVING = 0.1;
/** The suffix of a compressed blob's file name; a file without it holds the blob's bytes as they are. */
export const COMPRESSED_SUFFIX = '.br';

export type BlobEncoding = 'brotli' | 'none';

/** A blob whose address is known at once; `durable` settles when it is on disk (or rejects when it could not be written). */
export interface PendingBlob {
  hash: string;
  durable: Promise<void>;
}

const brotliCompressAsync = promisify(brotliCompress);

/**
 * Content-addressed files for large payloads (tool outputs, artifacts, raw imported lines), so
 * the in-memory database stays a small index. A blob is durable before its hash is returned,
 * so a journal line that names it never points at nothing.
 *
 * The address is always the sha256 of the original bytes. The file's NAME says how they are
 * kept: `<hash>.br` holds them brotli-compressed, `<hash>` holds them as they are (files handed
 * out for a plain read, such as archived chapters, and content that does not shrink by a tenth). Telling the two apart by name, not by sniffing the bytes, is what makes it safe: a
 * raw blob may begin with any bytes at all, brotli has no magic number, and both forms of one
 * hash decode to the same bytes, so a store holding either or both reads correctly.
 */
export class BlobStore {
  /** Blobs being written by putInBackground, so a second put of the same content waits on the first write. */
  private readonly writing = new Map<string, Promise<void>>();
  private readonly folders = new FolderSyncs();
  /** Folders this process made or found (at most 256): a blob write does not ask again. */
  private readonly folderMade = new Set<string>();

  constructor(private readonly root: string) {
    // A read-only store may have no blob folder yet: reads find nothing, writes are refused.
    try {
      fs.mkdirSync(root, { recursive: true, mode: FOLDER_MODE });
    } catch {
      // See above.
    }
  }

  private makeFolder(dir: string, needed: number): void {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: FOLDER_MODE });
    } catch (err) {
      throw asRefusedWrite(err, dir, needed);
    }
  }

  /** Stores content compressed (when that saves enough); its hash addresses it either way. */
  put(content: string | Uint8Array): string {
    const bytes = toBytes(content);
    const hash = sha256(bytes);
    const plain = this.plainPath(hash);
    const packed = plain + COMPRESSED_SUFFIX;
    if (fs.existsSync(packed) || fs.existsSync(plain)) return hash;
    const compressed = brotliCompressSync(bytes, brotliOptions(bytes));
    this.makeFolder(path.dirname(plain), compressed.length);
    if (worthCompressing(bytes, compressed)) replaceFileDurably(packed, compressed);
    else replaceFileDurably(plain, bytes);
    return hash;
  }

  /**
   * `put` with the compression, writes and fsyncs on the thread pool: the hash is returned at
   * once and `durable` settles once the blob is on disk. For a caller with other work to do
   * meanwhile (an import parses its next files); whatever names the hash must not be written
   * (journaled) before `durable` resolves. The files are the same as `put` writes.
   */
  putInBackground(content: string | Uint8Array): PendingBlob {
    const bytes = toBytes(content);
    const hash = sha256(bytes);
    const inFlight = this.writing.get(hash);
    if (inFlight) return { hash, durable: inFlight };
    const plain = this.plainPath(hash);
    const packed = plain + COMPRESSED_SUFFIX;
    if (fs.existsSync(packed) || fs.existsSync(plain)) return { hash, durable: Promise.resolve() };
    const dir = path.dirname(plain);
    if (!this.folderMade.has(dir)) {
      this.makeFolder(dir, bytes.length);
      this.folderMade.add(dir);
    }
    const durable = (async () => {
      const compressed = await brotliCompressAsync(bytes, brotliOptions(bytes));
      if (worthCompressing(bytes, compressed)) await replaceFileDurablyInBackground(packed, compressed, this.folders);
      else await replaceFileDurablyInBackground(plain, bytes, this.folders);
    })();
    this.writing.set(hash, durable);
    // A failed write is forgotten too, so a later put tries again.
    const forget = () => this.writing.delete(hash);
    durable.then(forget, forget);
    return { hash, durable };
  }

  /**
   * Stores content as a plain file that a person or an agent reads by its path (archived
   * chapters): `pathOf` then names that file. A compressed copy already there stays; both decode
   * to the same bytes.
   */
  putReadable(content: string | Uint8Array): string {
    const bytes = toBytes(content);
    const hash = sha256(bytes);
    const plain = this.plainPath(hash);
    if (fs.existsSync(plain)) return hash;
    this.makeFolder(path.dirname(plain), bytes.length);
    replaceFileDurably(plain, bytes);
    return hash;
  }

  /** The original bytes, whichever form holds them. */
  get(hash: string): Buffer | undefined {
    if (!isHash(hash)) return undefined;
    const plain = this.plainPath(hash);
    const packed = readIfThere(plain + COMPRESSED_SUFFIX);
    if (packed) {
      try {
        return brotliDecompressSync(packed);
      } catch {
        // A damaged compressed copy: a plain copy of the same hash, if any, still answers.
      }
    }
    return readIfThere(plain);
  }

  /**
   * Where a blob's compressed form would be kept (it may not exist), for a reader that decodes it
   * on another thread; whatever that reader cannot read, it reads through `get`.
   */
  compressedPathOf(hash: string): string | undefined {
    return isHash(hash) ? this.plainPath(hash) + COMPRESSED_SUFFIX : undefined;
  }

  /** Removes both forms of a blob; true when a file was there. The caller makes sure nothing names it any more. */
  delete(hash: string): boolean {
    if (!isHash(hash)) return false;
    const plain = this.plainPath(hash);
    let removed = false;
    for (const file of [plain, plain + COMPRESSED_SUFFIX]) {
      try {
        fs.unlinkSync(file);
        removed = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    return removed;
  }

  has(hash: string): boolean {
    return this.encodingOf(hash) !== undefined;
  }

  /** How the blob is kept on disk, or undefined when it is missing. */
  encodingOf(hash: string): BlobEncoding | undefined {
    if (!isHash(hash)) return undefined;
    const plain = this.plainPath(hash);
    if (fs.existsSync(plain)) return 'none';
    return fs.existsSync(plain + COMPRESSED_SUFFIX) ? 'brotli' : undefined;
  }

  /**
   * The file that holds a blob: the plain one when there is one (readable as it is), else the
   * compressed one (`.br`: readable only after brotli decoding — `encodingOf` says which). For a
   * missing blob, the plain path it would have.
   */
  pathOf(hash: string): string {
    const plain = this.plainPath(hash);
    return !fs.existsSync(plain) && fs.existsSync(plain + COMPRESSED_SUFFIX) ? plain + COMPRESSED_SUFFIX : plain;
  }

  /** The hash a path inside this store names (either form), or undefined for any other path. */
  hashOfPath(file: string): string | undefined {
    const resolved = path.resolve(file);
    const base = path.basename(resolved);
    const hash = base.endsWith(COMPRESSED_SUFFIX) ? base.slice(0, -COMPRESSED_SUFFIX.length) : base;
    if (!isHash(hash)) return undefined;
    const plain = this.plainPath(hash);
    return resolved === plain || resolved === plain + COMPRESSED_SUFFIX ? hash : undefined;
  }

  private plainPath(hash: string): string {
    return path.join(this.root, hash.slice(0, 2), hash);
  }
}

function brotliOptions(bytes: Uint8Array): { params: Record<number, number> } {
  return { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlibConstants.BROTLI_PARAM_LGWIN]: fittedWindow(bytes.length), [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.length } };
}

function worthCompressing(bytes: Uint8Array, compressed: Uint8Array): boolean {
  return compressed.length <= bytes.length * (1 - MIN_SAVING);
}

function toBytes(content: string | Uint8Array): Uint8Array {
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function isHash(hash: string): boolean {
  return /^[0-9a-f]{64}$/.test(hash);
}

function readIfThere(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}
