import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included. */
const SUN_PATH_MAX = 103;
const SOCKET_NAME = 'owner.sock';

/** A short, stable name for a store home: the same home always meets the same owner. */
export function homeHash(home: string): string {
  return createHash('sha256').update(path.resolve(home)).digest('hex').slice(0, 16);
}

/**
 * Where the owner of this store home listens. A named pipe on Windows (it vanishes with its
 * process, so no stale file is ever left); a Unix socket inside the home elsewhere (the home is
 * 0700, so only its user can connect), or, when that path would not fit in sun_path, inside a
 * 0700 folder of this user's under the temp folder, named by a hash of the home.
 */
export function ownerSocketPath(home: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return `\\\\.\\pipe\\recollect-${homeHash(home)}`;
  const inHome = path.join(home, SOCKET_NAME);
  if (Buffer.byteLength(inHome) <= SUN_PATH_MAX) return inHome;
  return path.join(shortSocketFolder(home), SOCKET_NAME);
}

/** Whether the owner's address is a file that can outlive its process (a Unix socket). */
export function socketLeavesFile(platform: NodeJS.Platform = process.platform): boolean {
  return platform !== 'win32';
}

function uidPart(): string {
  return typeof process.getuid === 'function' ? String(process.getuid()) : 'u';
}

function shortSocketFolder(home: string): string {
  return path.join(os.tmpdir(), `recollect-${uidPart()}-${homeHash(home)}`);
}

/**
 * Makes sure the folder the socket lives in exists, is a real folder (not a link another user
 * planted in a shared temp folder) and is this user's alone.
 */
export function prepareSocketFolder(socketPath: string, platform: NodeJS.Platform = process.platform): void {
  if (platform === 'win32') return;
  const folder = path.dirname(socketPath);
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(folder);
  if (!st.isDirectory()) throw new Error(`${folder} should be a folder for the store owner's socket, and it is not`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new Error(`${folder} belongs to another user; the store owner's socket cannot live there`);
  if ((st.mode & 0o077) !== 0 && path.basename(folder).startsWith('recollect-')) fs.chmodSync(folder, 0o700);
}
