import * as fs from 'node:fs';
import { StoreCorruptError } from './errors';
import { FILE_MODE } from './fileWrites';

/**
 * The live journal file's optional first line: the journal format's version and the logical
 * offset its first operation line starts at. Offsets are positions in the journal as if it had
 * never been sealed, so a snapshot's `journal_offset` and every process's position stay valid
 * when the old prefix moves into sealed segments. A file without it (a journal never sealed)
 * is version 1 and starts at offset 0.
 *
 * Version 1: one operation per line, its plain JSON (journalLine.ts). A build that changes how
 * lines are written must write another version here, so this build refuses its journal instead
 * of skipping lines it cannot read and checkpointing past them.
 */
const HEADER_KEY = 'recollect_journal';
export const JOURNAL_VERSION = 1;
const HEADER_PREFIX = Buffer.from(`{"${HEADER_KEY}":`, 'utf8');
/** Longer than any header this code writes; a longer first line is not a header. */
const HEADER_MAX = 128;

export function headerLine(base: number): Buffer {
  return Buffer.from(`${JSON.stringify({ [HEADER_KEY]: JOURNAL_VERSION, base })}\n`, 'utf8');
}

export interface LiveHead {
  /** Logical offset of the first byte after the header. */
  base: number;
  /** Physical bytes the header takes (0 without one). */
  headerLen: number;
}

/** Reads the header through an open descriptor; throws when the first line claims to be one but is not. */
export function readHead(fd: number, file: string): LiveHead {
  const buf = Buffer.alloc(HEADER_MAX);
  const got = fs.readSync(fd, buf, 0, HEADER_MAX, 0);
  const head = buf.subarray(0, got);
  if (head.length < HEADER_PREFIX.length || !head.subarray(0, HEADER_PREFIX.length).equals(HEADER_PREFIX)) return { base: 0, headerLen: 0 };
  const nl = head.indexOf(0x0a);
  let header: { base?: unknown; [HEADER_KEY]?: unknown } = {};
  try {
    if (nl > 0) header = JSON.parse(head.toString('utf8', 0, nl)) as typeof header;
  } catch {
    header = {};
  }
  const { base, [HEADER_KEY]: version } = header;
  if (typeof version === 'number' && version !== JOURNAL_VERSION) {
    throw new StoreCorruptError(
      `journal ${file} is in journal format version ${version}, written by ${version > JOURNAL_VERSION ? 'a newer' : 'an earlier'} build; this build reads version ${JOURNAL_VERSION} only. Nothing was changed${version > JOURNAL_VERSION ? ': update Recollect' : ''}.`,
      file,
    );
  }
  if (version !== JOURNAL_VERSION || typeof base !== 'number' || !Number.isSafeInteger(base) || base < 0) {
    throw new StoreCorruptError(`journal ${file} starts with a damaged header line; nothing was changed. Restore the journal or move the store aside.`, file);
  }
  return { base, headerLen: nl + 1 };
}

/** Errors that mean "this folder cannot be written" rather than "something is broken". */
export const READ_ONLY_CODES = new Set(['EROFS', 'EACCES', 'EPERM']);

/**
 * One generation of journal.jsonl, held open for reading and appending. Sealing replaces the
 * file by rename, so a holder compares the path's inode with its own to notice (one stat).
 * In a folder this process may not write (a read-only disk) it is held for reading only
 * (`appendFd` undefined), so memory can still be read there.
 */
export class LiveFile implements LiveHead {
  private constructor(
    readonly readFd: number,
    readonly appendFd: number | undefined,
    readonly ino: number,
    readonly base: number,
    readonly headerLen: number,
  ) {}

  static open(file: string): LiveFile {
    // The two opens could straddle a swap and land on different files: retry until they agree.
    for (let attempt = 0; ; attempt++) {
      const appendFd = openForAppend(file);
      const readFd = fs.openSync(file, 'r');
      const ino = fs.fstatSync(readFd).ino;
      if (appendFd === undefined || fs.fstatSync(appendFd).ino === ino || attempt >= 20) {
        try {
          const head = readHead(readFd, file);
          return new LiveFile(readFd, appendFd, ino, head.base, head.headerLen);
        } catch (err) {
          fs.closeSync(readFd);
          if (appendFd !== undefined) fs.closeSync(appendFd);
          throw err;
        }
      }
      fs.closeSync(readFd);
      fs.closeSync(appendFd);
    }
  }

  physicalSize(): number {
    return fs.fstatSync(this.readFd).size;
  }

  /** The logical offset just past this file's last byte. */
  logicalEnd(): number {
    return this.base + Math.max(0, this.physicalSize() - this.headerLen);
  }

  physicalOf(logical: number): number {
    return logical - this.base + this.headerLen;
  }

  /** False once sealing has renamed a newer generation over the path. */
  isCurrent(file: string): boolean {
    return this.currentSize(file) !== undefined;
  }

  /** This file's physical size read through the path (one stat), or undefined once sealing has renamed a newer generation over it. */
  currentSize(file: string): number | undefined {
    try {
      const st = fs.statSync(file);
      return st.ino === this.ino ? st.size : undefined;
    } catch (err) {
      // The path is only ever replaced by rename, never removed; if someone removed it, keep ours.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.physicalSize();
      throw err;
    }
  }

  close(): void {
    if (this.appendFd !== undefined) fs.closeSync(this.appendFd);
    fs.closeSync(this.readFd);
  }
}

/** The append descriptor, or undefined where the folder or file cannot be written (read-only). */
function openForAppend(file: string): number | undefined {
  try {
    return fs.openSync(file, 'a', FILE_MODE);
  } catch (err) {
    if (READ_ONLY_CODES.has((err as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw err;
  }
}
