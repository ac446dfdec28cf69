import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A small real disk (tmpfs) a test mounts itself, fills, frees and makes read-only. */
export interface TmpfsDisk {
  dir: string;
  /** Fills the disk until exactly `pages` pages are left free; returns the bytes free then. */
  fill(pages: number): number;
  /** Removes what fill wrote. */
  unfill(): void;
  readOnly(on: boolean): void;
  unmount(): void;
}

/** Mounts a tmpfs of `megabytes`, or says why it cannot (not root, no mount in this sandbox). */
export function mountTmpfs(megabytes: number): TmpfsDisk | string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-tmpfs-'));
  const run = (...args: string[]) => spawnSync('mount', args, { encoding: 'utf8' });
  const mounted = run('-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir);
  if (mounted.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    return `mounting a ${megabytes} MB tmpfs is not allowed here (${(mounted.stderr || mounted.error?.message || 'mount failed').trim()}); run the tests as root to check a real full disk`;
  }
  const filler = path.join(dir, 'filler');
  const pageSize = fs.statfsSync(dir).bsize;
  const free = () => fs.statfsSync(dir).bavail * pageSize;
  return {
    dir,
    fill(pages) {
      fs.rmSync(filler, { force: true });
      const fd = fs.openSync(filler, 'w');
      const block = Buffer.alloc(1024 * 1024, 0x61);
      try {
        for (;;) {
          const n = fs.writeSync(fd, block);
          if (n <= 0) break;
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
      const size = fs.fstatSync(fd).size;
      fs.ftruncateSync(fd, Math.floor(size / pageSize) * pageSize - pages * pageSize);
      fs.closeSync(fd);
      return free();
    },
    unfill() {
      fs.rmSync(filler, { force: true });
    },
    readOnly(on) {
      const r = run('-o', on ? 'remount,ro' : 'remount,rw', dir);
      if (r.status !== 0) throw new Error(`remount failed: ${r.stderr}`);
    },
    unmount() {
      // A process of a failed test may still hold a file there: then detach it lazily, never leave it mounted.
      if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
