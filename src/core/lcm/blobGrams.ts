import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CompiledPattern } from './regexPattern';
import { FILE_MODE, writeFully } from '../store/fileWrites';

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

export class BlobGrams {
  private readonly file: string;
  private readonly known = new Map<string, Uint8Array>();
  private readOffset = 0;
  private pending: Buffer[] = [];

  constructor(home: string) {
    this.file = path.join(home, BLOB_GRAMS_FILE);
  }

  /** Picks up summaries other processes (or earlier calls) appended since the last look. */
  refresh(): void {
    let size: number;
    try {
      size = fs.statSync(this.file).size;
    } catch {
      return;
    }
    if (size < this.readOffset) {
      // Rewritten (after a damaged record was dropped): read it again from the start.
      this.known.clear();
      this.readOffset = 0;
    }
    if (size === this.readOffset) return;
    const fd = fs.openSync(this.file, 'r');
    try {
      const tail = Buffer.allocUnsafe(size - this.readOffset);
      const got = fs.readSync(fd, tail, 0, tail.length, this.readOffset);
      const { used, damaged } = this.parse(tail.subarray(0, got));
      this.readOffset += used;
      if (damaged) this.rewrite();
    } finally {
      fs.closeSync(fd);
    }
  }

  get(hash: string): Uint8Array | undefined {
    return this.known.get(hash);
  }

  /** Summarises a blob just read and queues the summary for `flush`. */
  add(hash: string, bytes: Uint8Array): void {
    if (this.known.has(hash) || !/^[0-9a-f]{64}$/.test(hash)) return;
    const bits = summarise(bytes);
    this.known.set(hash, bits);
    const head = Buffer.alloc(HEADER);
    head.write(hash, 0, 'hex');
    head.writeUInt32LE(bits.length, HASH_BYTES);
    head.writeUInt32LE(checksum(bits), HASH_BYTES + 4);
    this.pending.push(head, Buffer.from(bits.buffer, bits.byteOffset, bits.length));
  }

  /**
   * Appends the queued summaries in one write. A failure (read-only home, full disk) is not a
   * search failure: the summaries stay in memory and the blobs are read next time.
   */
  flush(): void {
    if (!this.pending.length) return;
    const data = Buffer.concat(this.pending);
    this.pending = [];
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
        // What this process wrote is already known: skip it on the next refresh if nothing came between.
        if (at === this.readOffset) this.readOffset = at + data.length;
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      // A cache: nothing is lost but time.
    }
  }

  /**
   * Reads whole, valid records and says how many bytes they took. A record cut short at the end
   * may still be being written by another process: it is read next time. One that is invalid
   * (a crash tore it and later appends followed) is `damaged`.
   */
  private parse(buf: Buffer): { used: number; damaged: boolean } {
    let at = 0;
    while (at + HEADER <= buf.length) {
      const len = buf.readUInt32LE(at + HASH_BYTES);
      if (len < MIN_BITS / 8 || len > MAX_BITS / 8 || (len & (len - 1)) !== 0) return { used: at, damaged: true };
      if (at + HEADER + len > buf.length) break;
      const bits = buf.subarray(at + HEADER, at + HEADER + len);
      if (checksum(bits) !== buf.readUInt32LE(at + HASH_BYTES + 4)) return { used: at, damaged: true };
      this.known.set(buf.toString('hex', at, at + HASH_BYTES), bits);
      at += HEADER + len;
    }
    return { used: at, damaged: false };
  }

  /** Replaces a file with a damaged tail by the records known to be good, so later appends are read again. */
  private rewrite(): void {
    const parts: Buffer[] = [];
    for (const [hash, bits] of this.known) {
      const head = Buffer.alloc(HEADER);
      head.write(hash, 0, 'hex');
      head.writeUInt32LE(bits.length, HASH_BYTES);
      head.writeUInt32LE(checksum(bits), HASH_BYTES + 4);
      parts.push(head, Buffer.from(bits.buffer, bits.byteOffset, bits.length));
    }
    const data = Buffer.concat(parts);
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, data, { mode: FILE_MODE });
      fs.renameSync(tmp, this.file);
      this.readOffset = data.length;
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  }
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
