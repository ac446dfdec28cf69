import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTemp, tempHome } from './helpers/tempStore';
import { callTool as call } from './helpers/memoryCall';

const T0 = Date.parse('2026-11-01T10:00:00Z');

function vaultFile(home: string, rel: string): string {
  return path.join(home, 'vault', ...rel.split('/'));
}

describe('retire_memory and restore_memory', () => {
  it('a note leaves recall and the vault, and comes back byte for byte', async () => {
    const home = tempHome('retire');
    const s = await openTemp(home, () => T0);
    const content = '---\ntags: [ops]\n---\n# Runbook\n\nRestart the queue worker with `make restart-worker`.\r\n\nThen check the dashboard.\n';
    fs.mkdirSync(vaultFile(home, 'ops'), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'ops/runbook.md'), content);
    await call(s, 'index_memory', {});
    expect(await call(s, 'search_text', { query: 'restart worker' })).toMatchObject({ total: 1 });

    const retired = await call(s, 'retire_memory', { id: 'note:ops/runbook.md' });
    expect(retired).toMatchObject({ ok: true, retired: 'note:ops/runbook.md', file_removed: true });
    expect(fs.existsSync(vaultFile(home, 'ops/runbook.md'))).toBe(false);
    expect(await call(s, 'search_text', { query: 'restart worker' })).toMatchObject({ total: 0, index: { stale: false } });
    expect((await call(s, 'get_context', { query: 'restart the worker' })).notes).toEqual([]);
    expect(await call(s, 'read_memory', { id: 'note:ops/runbook.md' })).toMatchObject({ retired_at: expect.any(String), text: content });
    expect(await call(s, 'memory_status', {})).toMatchObject({ notes: 0, retired: { notes: 1 } });
    expect(await call(s, 'retire_memory', { id: 'note:ops/runbook.md' })).toMatchObject({ ok: false, reason: expect.stringContaining('already retired') });

    const restored = await call(s, 'restore_memory', { id: 'note:ops/runbook.md' });
    expect(restored).toMatchObject({ ok: true, restored: 'note:ops/runbook.md' });
    expect(fs.readFileSync(vaultFile(home, 'ops/runbook.md'), 'utf8')).toBe(content);
    expect(await call(s, 'search_text', { query: 'restart worker' })).toMatchObject({ total: 1, index: { stale: false } });
    expect(await call(s, 'restore_memory', { id: 'note:ops/runbook.md' })).toMatchObject({ ok: false, reason: expect.stringContaining('no retired note') });
    s.store.close();
  });

  it('refuses to restore a note over a file that now occupies its path, and changes nothing', async () => {
    const home = tempHome('retire');
    const s = await openTemp(home, () => T0);
    fs.mkdirSync(path.join(home, 'vault'), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'plan.md'), '# Plan A\n');
    await call(s, 'index_memory', {});
    await call(s, 'retire_memory', { id: 'note:plan.md' });
    fs.writeFileSync(vaultFile(home, 'plan.md'), '# Plan B, written after\n');

    const refused = await call(s, 'restore_memory', { id: 'note:plan.md' });
    expect(refused).toMatchObject({ ok: false });
    expect(String(refused.reason)).toContain('does not overwrite');
    expect(String(refused.reason)).toContain('plan.md');
    expect(fs.readFileSync(vaultFile(home, 'plan.md'), 'utf8')).toBe('# Plan B, written after\n');
    // The file that is there now is a new note; the retired one stays retired and readable.
    await call(s, 'index_memory', {});
    expect(await call(s, 'read_memory', { id: 'note:plan.md' })).toMatchObject({ text: '# Plan B, written after\n', retired_at: null });
    const map = await call(s, 'memory_map', { query: 'plan' });
    expect((map.retired as { items: { id: string }[] }).items.map((i) => i.id)).toEqual(['note:plan.md']);
    s.store.close();
  });

  it('an entry leaves its day log and recall, and returns to its place in the log', async () => {
    const home = tempHome('retire');
    let clock = T0;
    const s = await openTemp(home, () => clock);
    const first = await call(s, 'remember_note', { text: 'first entry' });
    clock += 60_000;
    const middle = await call(s, 'remember_note', { text: 'the secret middle entry' });
    clock += 60_000;
    await call(s, 'remember_note', { text: 'last entry' });
    const file = vaultFile(home, 'daily/2026-11-01.md');
    const original = fs.readFileSync(file, 'utf8');

    expect(await call(s, 'retire_memory', { id: middle.id })).toMatchObject({ ok: true, removed_from_file: true });
    expect(fs.readFileSync(file, 'utf8')).not.toContain('secret');
    expect(await call(s, 'search_text', { query: 'secret' })).toMatchObject({ total: 0, index: { stale: false } });
    expect(await call(s, 'restore_memory', { id: middle.id })).toMatchObject({ ok: true, restored: middle.id });
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect(await call(s, 'search_text', { query: 'secret' })).toMatchObject({ total: 1, index: { stale: false } });
    expect(await call(s, 'restore_memory', { id: first.id })).toMatchObject({ ok: false, reason: expect.stringContaining('not retired') });
    s.store.close();
  });

  it('a fact leaves recall but stays in the ledger, and returns as it was', async () => {
    let clock = T0;
    const s = await openTemp(undefined, () => clock);
    const fact = await call(s, 'save_memory', { subject: 'release train', predicate: 'day', object: 'Thursday' });
    expect(await call(s, 'retire_memory', { id: fact.id })).toMatchObject({ ok: true, kind: 'fact' });
    expect((await call(s, 'retrieve_memory', { subject: 'release train' })).values).toEqual([]);
    expect((await call(s, 'get_context', { query: 'release train day' })).facts).toEqual([]);
    expect(await call(s, 'read_memory', { id: fact.id })).toMatchObject({ object: 'Thursday', retired_at: expect.any(String) });
    expect(await call(s, 'restore_memory', { id: fact.id })).toMatchObject({ ok: true, status: 'current' });
    expect((await call(s, 'get_context', { query: 'release train day' })).facts).toEqual([expect.objectContaining({ id: fact.id, status: 'current' })]);

    // Superseded while retired: it comes back as history, the newer value stays current.
    await call(s, 'retire_memory', { id: fact.id });
    clock += 1000;
    await call(s, 'save_memory', { subject: 'release train', predicate: 'day', object: 'Friday' });
    expect(await call(s, 'restore_memory', { id: fact.id })).toMatchObject({ ok: true, status: 'historical' });
    const all = await call(s, 'retrieve_memory', { subject: 'release train', include_history: true });
    expect((all.values as { object: string; status: string }[]).map((v) => [v.object, v.status])).toEqual([
      ['Friday', 'current'],
      ['Thursday', 'historical'],
    ]);
    s.store.close();
  });

  it('refuses ids that are not memories, unknown memories and a whole day log', async () => {
    const s = await openTemp(undefined, () => T0);
    await call(s, 'remember', { statement: 'something' });
    expect(String((await call(s, 'retire_memory', { id: 'session:abc' })).reason)).toContain('not a memory id');
    expect(String((await call(s, 'retire_memory', { id: 'fact:nope' })).reason)).toContain('no fact');
    expect(String((await call(s, 'retire_memory', { id: 'entry:daily/2026-11-01.md#000000000000' })).reason)).toContain('no entry');
    expect(String((await call(s, 'retire_memory', { id: 'note:../outside.md' })).reason)).toContain('".."');
    expect(String((await call(s, 'retire_memory', { id: 'note:daily/2026-11-01.md' })).reason)).toContain('day log');
    expect(String((await call(s, 'retire_memory', { id: 'note:missing.md' })).reason)).toContain('no note');
    expect(await call(s, 'retire_memory', {})).toMatchObject({ ok: false });
    expect(await call(s, 'restore_memory', { id: '' })).toMatchObject({ ok: false });
    expect(await call(s, 'memory_status', {})).toMatchObject({ entries: 1, retired: { facts: 0, entries: 0, notes: 0 } });
    s.store.close();
  });
});
