import * as fs from 'node:fs';
import * as path from 'node:path';
import { walkTranscriptFiles } from '../src/core/history/importer';
import type { Rng } from './rng';

/**
 * A large transcript folder made of copies of the real fixtures. Each copy is its own set of
 * sessions: every UUID in a copy (in file contents and in paths, where Claude Code and Codex
 * keep their session ids) is replaced by a fresh one, consistently across the copy's files, so
 * a sub-agent file still names its parent. Files whose names hold no UUID (VS Code exports,
 * which take their id from the file name) are told apart by their copy folder and a name prefix.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HAS_UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

export interface ReplicatedTranscripts {
  root: string;
  /** One folder per copy, in order: importing them one by one lets the caller sample memory in between. */
  copyDirs: string[];
  files: number;
  bytes: number;
  copies: number;
  fixtureFiles: number;
  fixtureBytes: number;
}

interface Fixture {
  rel: string;
  text: string;
}

export function readFixtures(fixturesDir: string): Fixture[] {
  return [...walkTranscriptFiles(fixturesDir)].sort().map((file) => ({ rel: path.relative(fixturesDir, file), text: fs.readFileSync(file, 'utf8') }));
}

/** Writes copies of the fixtures under `root` until at least `targetBytes` are written (or `copies` exactly, when given). */
export function replicateTranscripts(fixturesDir: string, root: string, targetBytes: number, rng: Rng, onProgress?: (copies: number, bytes: number) => void): ReplicatedTranscripts {
  const fixtures = readFixtures(fixturesDir);
  const fixtureBytes = fixtures.reduce((a, f) => a + Buffer.byteLength(f.text), 0);
  if (!fixtureBytes) throw new Error(`no transcript fixtures under ${fixturesDir}`);
  const copies = Math.max(1, Math.ceil(targetBytes / fixtureBytes));
  const out: ReplicatedTranscripts = { root, copyDirs: [], files: 0, bytes: 0, copies, fixtureFiles: fixtures.length, fixtureBytes };
  for (let c = 0; c < copies; c++) {
    const dir = path.join(root, `copy-${String(c).padStart(4, '0')}`);
    const fresh = new Map<string, string>();
    const swap = (s: string) =>
      s.replace(UUID, (u) => {
        const key = u.toLowerCase();
        let v = fresh.get(key);
        if (!v) {
          v = uuidV4(rng);
          fresh.set(key, v);
        }
        return u === key ? v : v.toUpperCase();
      });
    for (const f of fixtures) {
      const rel = swap(f.rel);
      const base = path.basename(rel);
      const named = HAS_UUID.test(base) ? rel : path.join(path.dirname(rel), `c${c}-${base}`);
      const file = path.join(dir, named);
      const text = swap(f.text);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      out.files++;
      out.bytes += Buffer.byteLength(text);
    }
    out.copyDirs.push(dir);
    if (onProgress && (c + 1) % 25 === 0) onProgress(c + 1, out.bytes);
  }
  return out;
}

function uuidV4(rng: Rng): string {
  const h = rng.hex(32).split('');
  h[12] = '4';
  h[16] = '89ab'[parseInt(h[16] as string, 16) & 3] as string;
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/** Total size of the files under a folder (recursively), and how many there are. */
export function folderSize(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  if (!fs.existsSync(dir)) return { bytes, files };
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop() as string;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) {
        bytes += fs.statSync(p).size;
        files++;
      }
    }
  }
  return { bytes, files };
}
