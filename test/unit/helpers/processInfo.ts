import * as fs from 'node:fs';
import * as path from 'node:path';

/** The files a process has open (Linux): a client of the store's owner must have none of the store's. */
export function openFiles(pid: number): string[] {
  const dir = `/proc/${pid}/fd`;
  return fs.readdirSync(dir).flatMap((fd) => {
    try {
      return [fs.readlinkSync(path.join(dir, fd))];
    } catch {
      return [];
    }
  });
}

/** A process's resident memory now, MB. */
export function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
}
