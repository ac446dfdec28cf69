import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool as call } from './helpers/memoryCall';
import { CLI } from './helpers/mcpClient';
import { openTemp, tempHome } from './helpers/tempStore';

const T0 = Date.parse('2026-11-01T10:00:00Z');

function vaultFile(home: string, rel: string): string {
  return path.join(home, 'vault', ...rel.split('/'));
}

/** Runs one tool in a separate CLI process on the same store, as another editor window or agent would. */
function otherProcess(home: string, tool: string, input: object): Record<string, unknown> {
  const r = spawnSync(process.execPath, [CLI, 'tool', tool, JSON.stringify(input)], { env: { ...process.env, RECOLLECT_HOME: home }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('search_text index state and note chunks', () => {
  it('reports the same index state as a freshly opened store, before and after another process indexes the vault', async () => {
    const home = tempHome('search-index');
    const a = await openTemp(home, () => T0);
    await call(a, 'remember', { statement: 'the kestrel cluster runs the staging stack' });
    expect(await call(a, 'search_text', { query: 'kestrel' })).toMatchObject({ total: 1, index: { stale: false, changed_files: 0 } });

    // A person adds a note: this process sees it as not indexed yet.
    fs.mkdirSync(vaultFile(home, 'design'), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'design/kestrel.md'), '# Kestrel\n\nThe kestrel cluster has three nodes.\n');
    expect(await call(a, 'search_text', { query: 'kestrel' })).toMatchObject({ total: 1, index: { stale: true, changed_files: 1 } });

    // Another process indexes it: the vault's version moved under this process's cached one.
    expect(otherProcess(home, 'index_memory', {})).toMatchObject({ ok: true, files: { added: 1 } });
    const after = await call(a, 'search_text', { query: 'kestrel' });
    const fresh = await openTemp(home, () => T0);
    const answer = await call(fresh, 'search_text', { query: 'kestrel' });
    expect(after).toEqual(answer);
    expect(after).toMatchObject({ total: 2, index: { stale: false, changed_files: 0 } });
    fresh.store.close();
    a.store.close();
  });

  it('gives chunk and line to note hits only, as the note_chunks rows say', async () => {
    const home = tempHome('search-chunks');
    const s = await openTemp(home, () => T0);
    fs.mkdirSync(vaultFile(home, 'design'), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'design/queue.md'), `# Queue\n\n${'Filler paragraph about nothing in particular. '.repeat(40)}\n\nThe worker queue retries three times.\n`);
    await call(s, 'index_memory', {});
    await call(s, 'remember', { statement: 'the worker queue was moved to a new host' });
    const found = await call(s, 'search_text', { query: 'worker queue' });
    const hits = (found.hits as Record<string, unknown>[]).filter((h) => h.matched === 'all');
    expect(hits.map((h) => h.kind).sort()).toEqual(['note', 'note']);
    // The rest hold one of the words (the filler chunk under "# Queue"): partial matches, after these.
    expect((found.hits as Record<string, unknown>[]).slice(hits.length).every((h) => h.matched === 'partial')).toBe(true);
    const chunkRows = s.store.db.exec('SELECT c.seq, c.line FROM note_chunks c JOIN vault_files f ON f.id = c.file_id WHERE f.path = ? AND c.text LIKE ?', ['design/queue.md', '%worker queue%'])[0]?.values ?? [];
    expect(chunkRows).toHaveLength(1);
    const [seq, line] = chunkRows[0] as [number, number];
    for (const h of hits) {
      if (String(h.id).startsWith('note:')) expect(h).toMatchObject({ path: 'design/queue.md', chunk: seq, line });
      else expect(h).not.toHaveProperty('chunk');
    }
    expect(hits.filter((h) => String(h.id).startsWith('entry:'))).toHaveLength(1);
    s.store.close();
  });
});
