import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openServices, type Services } from '../../src/core/services';
import { callTool } from './helpers/memoryCall';
import { transcriptFixtures } from './helpers/fixtures';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const mode = (p: string) => fs.statSync(p).mode & 0o777;

/** Every folder and file under `home` (not following links) with its mode. */
function modes(home: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const rel of fs.readdirSync(home, { recursive: true }) as string[]) out.set(rel, mode(path.join(home, rel)));
  return out;
}

async function fullStore(home: string): Promise<Services> {
  const s = await openServices({ home, wasmPath: WASM_PATH, sealBytes: 1, readAhead: false });
  await callTool(s, 'remember', { statement: 'The deploy key is rotated every 90 days.' });
  await callTool(s, 'remember_note', { text: 'A second entry for the day log.' });
  await s.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
  s.store.blobs.put('a tool output kept as a blob '.repeat(200));
  await s.store.blobs.putInBackground(randomBytes(5_000)).durable;
  s.store.blobs.putReadable('an archived chapter a person reads by its path');
  s.store.checkpoint();
  expect(await s.store.sealJournal()).toBeDefined();
  return s;
}

let umask: number;
beforeEach(() => {
  // A typical person's umask, under which files were created 0644 in 0755 folders.
  umask = process.umask(0o022);
});
afterEach(() => {
  process.umask(umask);
});

describe('store file modes', () => {
  it('creates the home 0700 and every file the store writes 0600, every folder 0700', async () => {
    const home = path.join(tempHome('modes'), 'nested', 'store');
    const s = await fullStore(home);
    s.store.close();
    expect(mode(home)).toBe(0o700);
    const all = modes(home);
    // The kinds of file the issue names: journal, snapshot, blobs, vault — and the rest of the home.
    const names = [...all.keys()];
    for (const wanted of ['journal.jsonl', 'store.sqlite', 'journal.sealed']) expect(names).toContain(wanted);
    expect(names.some((n) => n.startsWith('blobs/') && /[0-9a-f]{64}/.test(n))).toBe(true);
    expect(names.some((n) => n.startsWith('vault/') && n.endsWith('.md'))).toBe(true);
    for (const [rel, m] of all) expect([rel, m.toString(8)]).toEqual([rel, fs.statSync(path.join(home, rel)).isDirectory() ? '700' : '600']);
  }, 60_000);

  it('tightens a store an earlier build made (0755 folders, 0644 files) at open, leaving the vault files\' own rights alone', async () => {
    const home = tempHome('modes-old');
    (await fullStore(home)).store.close();
    for (const rel of fs.readdirSync(home, { recursive: true }) as string[]) {
      const full = path.join(home, rel);
      fs.chmodSync(full, fs.statSync(full).isDirectory() ? 0o755 : 0o644);
    }
    fs.chmodSync(home, 0o755);
    const dayLog = (fs.readdirSync(path.join(home, 'vault'), { recursive: true }) as string[]).find((f) => f.endsWith('.md'))!;
    fs.chmodSync(path.join(home, 'vault', dayLog), 0o664); // the person's choice

    const s = await openServices({ home, wasmPath: WASM_PATH, readAhead: false });
    s.store.close();
    expect(mode(home)).toBe(0o700);
    for (const [rel, m] of modes(home)) {
      const isDir = fs.statSync(path.join(home, rel)).isDirectory();
      const want = rel === path.join('vault', dayLog) ? '664' : isDir ? '700' : '600';
      expect([rel, m.toString(8)]).toEqual([rel, want]);
    }
  }, 60_000);

  it('a day log rewritten by the store keeps the rights the person gave it; a new one is 0600', async () => {
    const home = tempHome('modes-vault');
    const s = await openServices({ home, wasmPath: WASM_PATH, readAhead: false });
    try {
      const first = await callTool(s, 'remember_note', { text: 'Kept in the log.' });
      const gone = await callTool(s, 'remember_note', { text: 'Retired from the log, which rewrites the file.' });
      const file = path.join(home, 'vault', String(first.path));
      expect(mode(file)).toBe(0o600);
      fs.chmodSync(file, 0o640);
      expect(await callTool(s, 'retire_memory', { id: gone.id })).toMatchObject({ ok: true });
      expect(fs.readFileSync(file, 'utf8')).not.toContain('Retired from the log');
      expect(mode(file)).toBe(0o640);
    } finally {
      s.store.close();
    }
  });
});
