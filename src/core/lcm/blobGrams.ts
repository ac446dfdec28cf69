import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CompiledPattern } from './regexPattern';
import { FILE_MODE, readFully, writeFully } from '../store/fileWrites';

/**
 * A compact, persistent summary of each large event's blob, so lcm_grep can tell without
 * opening and decompressing a blob that it cannot hold a pattern's literals. Opening,
 * reading and decoding one small brotli file costs ~50 µs whatever it holds; at 1 GB of
 * transcripts there are ~20,000 of them, and most literals are in few.
 *
 * The summary is a one-hash Bloom filter of the blob's byte trigrams and 4-grams with ASCII
 * letters folded to lower case. A text that holds a literal holds every trigram and 4-gram of
 * it, and folding both sides keeps that true for case-sensitive literals and for /i without u
 * (which folds ASCII only with ASCII): a missing bit proves the literal absent, a set bit
 * proves nothing. So a blob is only ever skipped when it cannot match, and the answers stay
 * exactly those of a full scan. Trigrams alone let through a third of the blobs read for
 * "ollama" on the bench's store: "llama" and "collect" hold all of its trigrams, not "olla".
 *
 * Blobs are content-addressed and never change, so a summary is valid for ever: it is derived
 * data kept beside the store (not in the journal), computed the first time a search reads the
 * blob anyway, and appended to one file that every process shares. A damaged or torn record
 * only means its blob is read again.
 */

/** The filters' file in the store's home folder. */
export const BLOB_GRAMS_FILE = 'lcm-blob-grams.v2';
/** The trigram-only filters of earlier versions: removed when the new file is started. */
const OLDER_FILES = ['lcm-blob-grams.v1'];
const HASH_BYTES = 32;
const HEADER = HASH_BYTES + 8;
/** Filter bits per blob byte, as a power of two between MIN_BITS and MAX_BITS (see `summarise`). */
const MIN_BITS = 256;
const MAX_BITS = 1 << 22;
/** Summaries queued past this many bytes are appended at once, so a call that reads many blobs never holds all their filters. */
const FLUSH_BYTES = 4 * 1024 * 1024;
/** Summaries that could not be appended (a read-only home, a full disk) are kept up to this many bytes; past it new ones are dropped, which costs only time. */
const UNSAVED_MAX = 16 * 1024 * 1024;
/** The file is read in pieces of this size: its records are parsed, and a batch of filters tested, a piece at a time. */
const READ_PIECE = 4 * 1024 * 1024;
/** Filters this close in the file are read in one call; the bytes between are read and ignored. */
const SPAN_GAP = 16 * 1024;
/** An index entry in V8: the 64-character hash string (its header and one byte a character) and the map's slot. */
const INDEX_ENTRY_BYTES = 120;

/**
 * The filters of one store's blobs. The process knows where each filter is in the shared file
 * (an offset and a length a blob, a few dozen bytes), not the filters themselves: at 5 GB of
 * transcripts they are 150 MB, which no process's memory budget has room for. A test reads the
 * filters it needs, in file order and a span at a time.
 */
export class BlobGrams {
  private readonly file: string;
  /** The file as this process indexed it: read through one descriptor, so another process replacing it (`rewrite`) changes nothing under an index. */
  private fd: number | undefined;
  private inode = -1;
  /** Where each filter's bits are in the file (`placeOf`). */
  private readonly where = new Map<string, number>();
  /** Summaries this process made that the file does not hold yet. */
  private readonly unsaved = new Map<string, Uint8Array>();
  private unsavedBytes = 0;
  private readOffset = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(home: string) {
    this.file = path.join(home, BLOB_GRAMS_FILE);
  }

  /** Picks up summaries other processes (or earlier calls) appended since the last look. */
  refresh(): void {
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch {
      return;
    }
    if (st.ino !== this.inode || st.size < this.readOffset) {
      // A new file (rewritten after a damaged record was dropped, or removed and started again): index it from the start.
      this.close();
      try {
        this.fd = fs.openSync(this.file, 'r');
      } catch {
        return;
      }
      this.inode = fs.fstatSync(this.fd).ino;
    }
    const fd = this.fd as number;
    const size = fs.fstatSync(fd).size;
    let damaged = false;
    while (this.readOffset < size && !damaged) {
      const piece = Buffer.allocUnsafe(Math.min(size - this.readOffset, Math.max(READ_PIECE, HEADER + MAX_BITS / 8)));
      const got = fs.readSync(fd, piece, 0, piece.length, this.readOffset);
      const parsed = this.parse(piece.subarray(0, got), this.readOffset);
      damaged = parsed.damaged;
      if (parsed.used === 0) break; // a record still being written
      this.readOffset += parsed.used;
    }
    if (damaged) this.rewrite();
  }

  /** The filter of blob `hash`, when one was made. */
  get(hash: string): Uint8Array | undefined {
    const held = this.unsaved.get(hash);
    if (held) return held;
    const at = this.where.get(hash);
    if (at === undefined || this.fd === undefined) return undefined;
    const bits = new Uint8Array(lengthOf(at));
    return readFully(this.fd, bits, offsetOf(at)) === bits.length ? bits : undefined;
  }

  /**
   * Tests the filters of `hashes` against `keys`, reading them in file order: each blob whose
   * filter proves a key missing goes into `absent`, each whose filter may hold them all into
   * `passed`; a blob with no filter into neither.
   */
  test(hashes: Iterable<string>, keys: readonly Uint8Array[], absent: Set<string>, passed: Set<string>): void {
    const filed: [number, string][] = [];
    for (const hash of hashes) {
      const held = this.unsaved.get(hash);
      if (held) (mayHold(held, keys) ? passed : absent).add(hash);
      else {
        const at = this.where.get(hash);
        if (at !== undefined) filed.push([at, hash]);
      }
    }
    if (!filed.length || this.fd === undefined) return;
    filed.sort((a, b) => a[0] - b[0]);
    const fd = this.fd;
    let span = Buffer.allocUnsafe(0);
    for (let i = 0; i < filed.length; ) {
      const [head] = filed[i] as [number, string];
      const first = offsetOf(head);
      let end = first + lengthOf(head);
      let j = i + 1;
      for (; j < filed.length; j++) {
        const [code] = filed[j] as [number, string];
        const stop = offsetOf(code) + lengthOf(code);
        if (offsetOf(code) - end > SPAN_GAP || stop - first > READ_PIECE) break;
        end = Math.max(end, stop);
      }
      if (span.length < end - first) span = Buffer.allocUnsafe(Math.max(end - first, READ_PIECE));
      if (readFully(fd, span.subarray(0, end - first), first) === end - first) {
        for (let k = i; k < j; k++) {
          const [code, hash] = filed[k] as [number, string];
          const at = offsetOf(code) - first;
          (mayHold(span.subarray(at, at + lengthOf(code)), keys) ? passed : absent).add(hash);
        }
      }
      i = j;
    }
  }

  /** Summarises a blob just read and queues the summary for `flush`. */
  add(hash: string, bytes: Uint8Array): void {
    if (this.where.has(hash) || this.unsaved.has(hash) || !/^[0-9a-f]{64}$/.test(hash)) return;
    const bits = summarise(bytes);
    if (this.unsavedBytes + bits.length > UNSAVED_MAX) return;
    this.unsaved.set(hash, bits);
    this.unsavedBytes += bits.length;
    const record = encodeRecord(hash, bits);
    this.pending.push(record);
    this.pendingBytes += record.length;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
  }

  /**
   * Appends the queued summaries in one write, then indexes them where they landed. A failure
   * (read-only home, full disk) is not a search failure: the summaries stay in memory (up to
   * UNSAVED_MAX) and the blobs are read next time.
   */
  flush(): void {
    if (!this.pending.length) return;
    const data = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    try {
      const fd = fs.openSync(this.file, 'a', FILE_MODE);
      try {
        const at = fs.fstatSync(fd).size;
        try {
          writeFully(fd, data);
        } catch (err) {
          // No half record for the next append to follow; a peer's record appended meanwhile goes too, which costs only time.
          fs.ftruncateSync(fd, at);
          throw err;
        }
        if (at === 0) for (const old of OLDER_FILES) fs.rmSync(path.join(path.dirname(this.file), old), { force: true });
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return; // A cache: nothing is lost but time.
    }
    this.refresh();
  }

  /** What this process holds for the filters: the index (about INDEX_ENTRY_BYTES a blob) and the summaries not yet in the file. */
  get heldBytes(): number {
    return this.where.size * INDEX_ENTRY_BYTES + this.unsavedBytes + this.pendingBytes;
  }

  /** Closes the file (the index goes with it; a later refresh reads the file again). */
  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    this.inode = -1;
    this.where.clear();
    this.readOffset = 0;
  }

  /**
   * Indexes whole, valid records of `buf` (read from `offset` of the file) and says how many
   * bytes they took. A record cut short at the end may still be being written by another
   * process: it is read next time. One that is invalid (a crash tore it and later appends
   * followed) is `damaged`.
   */
  private parse(buf: Buffer, offset: number): { used: number; damaged: boolean } {
    let at = 0;
    while (at + HEADER <= buf.length) {
      const len = buf.readUInt32LE(at + HASH_BYTES);
      if (len < MIN_BITS / 8 || len > MAX_BITS / 8 || (len & (len - 1)) !== 0) return { used: at, damaged: true };
      if (at + HEADER + len > buf.length) break;
      const bits = buf.subarray(at + HEADER, at + HEADER + len);
      if (checksum(bits) !== buf.readUInt32LE(at + HASH_BYTES + 4)) return { used: at, damaged: true };
      const hash = buf.toString('hex', at, at + HASH_BYTES);
      this.where.set(hash, placeOf(offset + at + HEADER, len));
      const held = this.unsaved.get(hash);
      if (held) {
        this.unsaved.delete(hash);
        this.unsavedBytes -= held.length;
      }
      at += HEADER + len;
    }
    return { used: at, damaged: false };
  }

  /** Replaces a file with a damaged tail by the records known to be good, so later appends are read again. */
  private rewrite(): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      const out = fs.openSync(tmp, 'w', FILE_MODE);
      try {
        for (const hash of this.where.keys()) {
          const bits = this.get(hash);
          if (bits) writeFully(out, encodeRecord(hash, bits));
        }
      } finally {
        fs.closeSync(out);
      }
      fs.renameSync(tmp, this.file);
    } catch {
      fs.rmSync(tmp, { force: true });
      return;
    }
    // Indexed again from the new file.
    this.close();
    this.refresh();
  }
}

/** A filter's place in the file as one number (a Map of numbers is smaller than one of pairs): its offset × 32 + log2 of its length, a power of two. */
function placeOf(offset: number, length: number): number {
  return offset * 32 + Math.log2(length);
}

function offsetOf(place: number): number {
  return Math.floor(place / 32);
}

function lengthOf(place: number): number {
  return 2 ** (place % 32);
}

function encodeRecord(hash: string, bits: Uint8Array): Buffer {
  const record = Buffer.alloc(HEADER + bits.length);
  record.write(hash, 0, 'hex');
  record.writeUInt32LE(bits.length, HASH_BYTES);
  record.writeUInt32LE(checksum(bits), HASH_BYTES + 4);
  record.set(bits, HEADER);
  return record;
}

/**
 * The byte strings whose trigrams a matching text must hold: each literal's UTF-8 bytes with
 * ASCII folded to lower case. Undefined when the filter cannot decide (no literal of three
 * bytes, or a fold beyond ASCII, or a literal with no exact byte form), and then every blob is read.
 */
export function gramKeys(pattern: CompiledPattern): Uint8Array[] | undefined {
  if (pattern.caseInsensitive && (pattern.foldsBeyondAscii || !pattern.literals.every((l) => /^[\x00-\x7f]+$/.test(l)))) return undefined;
  const keys: Uint8Array[] = [];
  for (const l of pattern.literals) {
    const bytes = Buffer.from(l, 'utf8');
    // A lone surrogate or U+FFFD has no exact byte form (decoding can make U+FFFD from other bytes).
    if (bytes.toString('utf8') !== l || l.includes('\uFFFD')) return undefined;
    if (bytes.length >= 3) keys.push(foldAscii(bytes));
  }
  return keys.length ? keys : undefined;
}

/** False only when `bits` proves the blob lacks one of the keys. */
export function mayHold(bits: Uint8Array, keys: readonly Uint8Array[]): boolean {
  const shift = 32 - Math.log2(bits.length * 8);
  const has = (h: number) => ((bits[h >>> 3] as number) & (1 << (h & 7))) !== 0;
  for (const k of keys) {
    for (let i = 0; i + 2 < k.length; i++) {
      if (!has(slot(k[i] as number, k[i + 1] as number, k[i + 2] as number, shift))) return false;
    }
    for (let i = 0; i + 3 < k.length; i++) {
      if (!has(slot4(k[i] as number, k[i + 1] as number, k[i + 2] as number, k[i + 3] as number, shift))) return false;
    }
  }
  return true;
}

/**
 * The filter for one blob: one bit per byte of it, rounded up to a power of two. Measured on
 * the 1 GB bench's 19,702 blobs, trigrams alone at a bit per byte left filters 11% full on
 * average (20% at most); trigrams and 4-grams at that size fill them about twice as much, still
 * well under half (a literal of n bytes sets 2n-5 bits, and passes by chance with odds below
 * 2^-(2n-5)), at an eighth of the blobs' raw size.
 */
export function summarise(bytes: Uint8Array): Uint8Array {
  let m = MIN_BITS;
  while (m < bytes.length && m < MAX_BITS) m *= 2;
  const bits = new Uint8Array(m / 8);
  const shift = 32 - Math.log2(m);
  const n = bytes.length;
  if (n < 3) return bits;
  let z = -1; // no byte before the first trigram: no 4-gram ends there
  let a = LOWER[bytes[0] as number] as number;
  let b = LOWER[bytes[1] as number] as number;
  for (let i = 2; i < n; i++) {
    const c = LOWER[bytes[i] as number] as number;
    const h = slot(a, b, c, shift);
    bits[h >>> 3] = (bits[h >>> 3] as number) | (1 << (h & 7));
    if (z >= 0) {
      const h4 = slot4(z, a, b, c, shift);
      bits[h4 >>> 3] = (bits[h4 >>> 3] as number) | (1 << (h4 & 7));
    }
    z = a;
    a = b;
    b = c;
  }
  return bits;
}

function slot(a: number, b: number, c: number, shift: number): number {
  return Math.imul(a | (b << 8) | (c << 16), 0x9e3779b1) >>> shift;
}

/** A 4-gram's bit, hashed with another multiplier so it does not land where the trigram of its first three bytes does. */
function slot4(a: number, b: number, c: number, d: number, shift: number): number {
  return Math.imul((a | (b << 8) | (c << 16) | (d << 24)) ^ 0x5bd1e995, 0x85ebca6b) >>> shift;
}

/** Each byte with ASCII A–Z folded to a–z. */
const LOWER = Uint8Array.from({ length: 256 }, (_, b) => (b >= 65 && b <= 90 ? b + 32 : b));

function foldAscii(bytes: Uint8Array): Uint8Array {
  return bytes.map((b) => LOWER[b] as number);
}

/** FNV-1a over the filter: enough to catch a torn or overwritten record. */
function checksum(bits: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bits.length; i++) h = Math.imul(h ^ (bits[i] as number), 0x01000193);
  return h >>> 0;
}
