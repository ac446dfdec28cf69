import * as fs from 'node:fs';
import * as path from 'node:path';
import { syncFolder, tempBeside } from './durableFile';
import { asRefusedWrite, FILE_MODE, removeQuietly } from './fileWrites';
import { pagedHeader, sha256 } from './pagedFrame';

/** The header's fixed part (magic, size, chunk size, count), one entry per chunk and its own hash: see pagedFrame.ts. */
const headerLength = (count: number) => 8 + 8 + 4 + 4 + count * (4 + 32) + 32;

/**
 * Writes a version 3 snapshot chunk by chunk, so neither a checkpoint nor a compaction holds the
 * whole file in memory: the chunks go to a temp file beside the snapshot from where the header
 * will end (its length depends only on the chunk count), the header is written last, then the
 * file is synced and renamed over the snapshot and the folder synced, as replaceFileDurably does:
 * a crash leaves the old snapshot or the whole new one. On any failure `abandon` removes the temp
 * file; a full disk becomes a WriteRefusedError.
 */
export class SnapshotWriter {
  private readonly temp: string;
  private fd: number | undefined;
  private at: number;
  private readonly chunks: { length: number; hash: Buffer }[] = [];

  constructor(
    private readonly file: string,
    private readonly size: number,
    private readonly chunkBytes: number,
    private readonly count: number,
  ) {
    this.temp = tempBeside(file);
    this.at = headerLength(count);
    try {
      this.fd = fs.openSync(this.temp, 'wx', FILE_MODE);
    } catch (err) {
      throw asRefusedWrite(err, file, this.at);
    }
  }

  /** The next chunk's compressed bytes (its hash when the caller already checked it against one). */
  add(compressed: Buffer, hash: Buffer = sha256(compressed)): void {
    this.write(compressed, this.at);
    this.at += compressed.length;
    this.chunks.push({ length: compressed.length, hash });
  }

  /** Writes the header, syncs, renames over the snapshot; returns the header's hash (which names the file). */
  commit(): Buffer {
    if (this.chunks.length !== this.count) throw new Error(`the snapshot writer got ${this.chunks.length} chunks of ${this.count}`);
    const header = pagedHeader(this.size, this.chunkBytes, this.chunks);
    this.write(header, 0);
    const fd = this.fd as number;
    try {
      fs.fsyncSync(fd);
    } catch (err) {
      throw asRefusedWrite(err, this.file, this.at);
    }
    fs.closeSync(fd);
    this.fd = undefined;
    try {
      fs.renameSync(this.temp, this.file);
    } catch (err) {
      removeQuietly(this.temp);
      throw asRefusedWrite(err, this.file, this.at);
    }
    this.committed = true;
    syncFolder(path.dirname(this.file));
    return Buffer.from(header.subarray(header.length - 32));
  }

  private committed = false;

  /** After a failure or a dropped checkpoint: closes and removes the temp file (nothing once committed). */
  abandon(): void {
    if (this.fd !== undefined) {
      try {
        fs.closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = undefined;
    }
    if (!this.committed) removeQuietly(this.temp);
  }

  private write(data: Uint8Array, position: number): void {
    const fd = this.fd;
    if (fd === undefined) throw new Error('the snapshot writer is closed');
    try {
      for (let done = 0; done < data.length; ) {
        const n = fs.writeSync(fd, data, done, data.length - done, position + done);
        if (n <= 0) throw Object.assign(new Error(`ENOSPC: no space left on device, write stored ${done} of ${data.length} bytes`), { code: 'ENOSPC' });
        done += n;
      }
    } catch (err) {
      throw asRefusedWrite(err, this.file, this.at + data.length);
    }
  }
}
