import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempBeside } from './durableFile';
import { asRefusedWrite, FILE_MODE, removeQuietly, writeFully } from './fileWrites';

/**
 * `replaceFileDurably` on the thread pool: write a temp file, fsync it, rename it over `file`,
 * then fsync the folder (through `folders`, which shares one fsync among renames into the same
 * folder). Resolves once a crash would leave the whole new file; the calling thread goes on
 * working meanwhile, and several such writes wait on the disk together instead of in a row.
 */
export async function replaceFileDurablyInBackground(file: string, data: Uint8Array, folders: FolderSyncs): Promise<void> {
  const tmp = tempBeside(file);
  // Only the fsyncs wait on the disk: the write, close and rename land in the page cache, so
  // they run here. Sent to the thread pool too, they queue behind the fsyncs there (4 threads)
  // and each blob needs more turns of the caller's event loop; in one bench run each (load ~14
  // on 2 cores, so only a hint) that import spent 28 s in those turns against 5 s.
  // As in replaceFileDurably, a short or failed write or sync never reaches the rename.
  try {
    const fd = fs.openSync(tmp, 'w', FILE_MODE);
    try {
      writeFully(fd, data);
      await fsyncAsync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (err) {
    removeQuietly(tmp);
    throw asRefusedWrite(err, file, data.length);
  }
  await folders.sync(path.dirname(file));
}

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
}

/**
 * Folder fsyncs that make renames durable. A call while one for the same folder runs shares
 * the single next fsync, started when it ends (it covers every rename made before any of those
 * calls), as Journal.sync does for lines.
 */
export class FolderSyncs {
  private readonly running = new Map<string, Promise<void>>();
  private readonly queued = new Map<string, Promise<void>>();

  sync(dir: string): Promise<void> {
    const queued = this.queued.get(dir);
    if (queued) return queued;
    const running = this.running.get(dir);
    if (!running) return this.start(dir);
    const done = () => undefined;
    const next = running.then(done, done).then(() => {
      this.queued.delete(dir);
      return this.start(dir);
    });
    this.queued.set(dir, next);
    return next;
  }

  private start(dir: string): Promise<void> {
    const p = syncFolderAsync(dir);
    this.running.set(dir, p);
    const clear = () => {
      if (this.running.get(dir) === p) this.running.delete(dir);
    };
    p.then(clear, clear);
    return p;
  }
}

async function syncFolderAsync(dir: string): Promise<void> {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch {
    // Some platforms (Windows) cannot open a folder for sync; the rename is still atomic there.
    return;
  }
  try {
    await fsyncAsync(fd);
  } catch (err) {
    // Windows refuses to sync a folder handle (EPERM); anywhere else a failed sync is a failure.
    if (process.platform !== 'win32') throw err;
  } finally {
    fs.closeSync(fd);
  }
}
