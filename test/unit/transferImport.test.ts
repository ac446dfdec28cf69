import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Services } from '../../src/core/services';
import { queryScalar } from '../../src/core/store/sqlite';
import { callTool as call } from './helpers/memoryCall';
import { CLI } from './helpers/mcpClient';
import { openTemp, tempHome } from './helpers/tempStore';

function vaultFile(home: string, rel: string): string {
  return path.join(home, 'vault', ...rel.split('/'));
}

function stagedCount(s: Services): number {
  return Number(queryScalar(s.store.db, 'SELECT count(*) FROM import_batches') ?? 0);
}

const NOTES = [
  { relativePath: 'projects/alpha.md', markdown: '# Alpha\n\nThe alpha project ships the quokka parser.\n' },
  { relativePath: 'people/ana.md', markdown: '---\ntitle: Ana\n---\nAna reviews every zebrafish migration.\n' },
  { relativePath: 'drafts/skip.md', markdown: '# Draft\n\nnot ready\n' },
];

describe('preview_import', () => {
  it('checks only with stage:false: nothing held, no batchId, what would be created', async () => {
    const home = tempHome('import');
    const s = await openTemp(home);
    const r = await call(s, 'preview_import', { label: 'vault1', files: NOTES, exclude: ['drafts'], stage: false });
    expect(r).toMatchObject({ ok: true, staged: false, would_create: ['Imported/vault1/projects/alpha.md', 'Imported/vault1/people/ana.md'], excluded: ['drafts/skip.md'], conflicts: [] });
    expect(r.batchId).toBeUndefined();
    expect(stagedCount(s)).toBe(0);
    expect(fs.existsSync(vaultFile(home, 'Imported'))).toBe(false);
    const only = await call(s, 'preview_import', { label: 'vault1', files: NOTES, include: ['people/'], stage: false });
    expect(only.would_create).toEqual(['Imported/vault1/people/ana.md']);
    s.store.close();
  });

  it('one bad file refuses the whole call, naming its index; nothing is staged', async () => {
    const s = await openTemp();
    const cases = [
      { markdown: 'bell \u0007 here', index: 2 },
      { markdown: 'delete \u007f here', index: 1 },
      { markdown: 'half a pair \ud800 here', index: 0 },
    ];
    for (const c of cases) {
      const files = NOTES.map((f, i) => (i === c.index ? { ...f, markdown: c.markdown } : f));
      const r = await call(s, 'preview_import', { label: 'x', files });
      expect(r).toMatchObject({ ok: false, reason: expect.stringContaining(`files[${c.index}]`) });
    }
    expect(await call(s, 'preview_import', { label: 'x', files: [...NOTES, { relativePath: 'image.png', markdown: 'x' }] })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('files[3]'),
    });
    // Tab, newline and carriage return are text.
    expect(await call(s, 'preview_import', { label: 'x', files: [{ relativePath: 'ok.md', markdown: 'a\tb\r\nc\n' }], stage: false })).toMatchObject({ ok: true });
    expect(stagedCount(s)).toBe(0);
    s.store.close();
  });

  it('refuses over the limits with the measured numbers', async () => {
    const s = await openTemp();
    const many = Array.from({ length: 101 }, (_, i) => ({ relativePath: `n${i}.md`, markdown: 'x' }));
    expect(await call(s, 'preview_import', { label: 'x', files: many })).toMatchObject({ ok: false, budget: { limit: 100, used: 101, unit: 'items' } });
    const big = 'é'.repeat(32 * 1024) + 'x'; // 65,537 bytes in UTF-8, 32,769 characters
    expect(await call(s, 'preview_import', { label: 'x', files: [{ relativePath: 'a.md', markdown: big }] })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('files[0]'),
      budget: { limit: 65536, used: 65537, unit: 'bytes' },
    });
    const third = 'y'.repeat(50 * 1024);
    const batch = ['a', 'b', 'c'].map((n) => ({ relativePath: `${n}.md`, markdown: third }));
    expect(await call(s, 'preview_import', { label: 'x', files: batch })).toMatchObject({ ok: false, budget: { limit: 131072, used: 153600, unit: 'bytes' } });
    expect(await call(s, 'preview_import', { label: 'x'.repeat(201), files: NOTES })).toMatchObject({ ok: false });
    expect(await call(s, 'preview_import', { label: '', files: NOTES })).toMatchObject({ ok: false });
    expect(await call(s, 'preview_import', { label: 'a/b', files: NOTES })).toMatchObject({ ok: false, reason: expect.stringContaining('separator') });
    expect(await call(s, 'preview_import', { label: 'x', files: [{ relativePath: '../escape.md', markdown: 'x' }] })).toMatchObject({ ok: false, reason: expect.stringContaining('files[0]') });
    expect(stagedCount(s)).toBe(0);
    s.store.close();
  });
});

describe('apply_import and undo_import', () => {
  it('a future front-matter date is clamped to the write time and reported', async () => {
    const home = tempHome('import-date');
    const s = await openTemp(home);
    const files = [{ relativePath: 'future.md', markdown: '---\nsession_date: 2099-01-01T00:00:00Z\n---\n# From the future\n\nwombat telemetry\n' }];
    const preview = await call(s, 'preview_import', { label: 'dates', files });
    expect(preview).toMatchObject({ ok: true, dates_clamped: [{ index: 0, path: 'future.md', claimed: '2099-01-01T00:00:00.000Z' }] });
    const applied = await call(s, 'apply_import', { batchId: preview.batchId });
    expect(applied).toMatchObject({ ok: true, created: ['Imported/dates/future.md'], dates_clamped: [{ path: 'Imported/dates/future.md', claimed: '2099-01-01T00:00:00.000Z' }] });
    const writeTime = Date.parse(String(applied.applied_at));
    const noteDate = Number(queryScalar(s.store.db, "SELECT note_date FROM vault_files WHERE path = 'Imported/dates/future.md' AND retired_at IS NULL"));
    expect(Math.abs(noteDate - writeTime)).toBeLessThanOrEqual(2000);
    s.store.close();
  });

  it('applies in another process within 15 minutes: additive, conflicts kept, found by search; undo retires only what it created', async () => {
    const home = tempHome('import-apply');
    const s = await openTemp(home);
    // A different file already at one target, and the same text already at another.
    fs.mkdirSync(vaultFile(home, 'Imported/v/people'), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'Imported/v/people/ana.md'), 'my own notes on Ana\n');
    fs.mkdirSync(vaultFile(home, 'Imported/v/drafts'), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'Imported/v/drafts/skip.md'), NOTES[2]!.markdown);
    await call(s, 'index_memory', {});
    const extra = { relativePath: 'projects/beta.md', markdown: '# Beta\n\nbeta keeps the quokka cache warm\n' };
    const preview = await call(s, 'preview_import', { label: 'v', files: [...NOTES, extra] });
    expect(preview).toMatchObject({
      ok: true,
      staged: true,
      batchId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      would_create: ['Imported/v/projects/alpha.md', 'Imported/v/projects/beta.md'],
      conflicts: [{ index: 1, path: 'Imported/v/people/ana.md' }],
      unchanged: ['Imported/v/drafts/skip.md'],
    });
    s.store.close();

    // The batch lives in the store: a separate CLI process applies it.
    const r = spawnSync(process.execPath, [CLI, 'tool', 'apply_import', JSON.stringify({ batchId: preview.batchId })], { env: { ...process.env, RECOLLECT_HOME: home }, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      created: ['Imported/v/projects/alpha.md', 'Imported/v/projects/beta.md'],
      conflicts: [{ path: 'Imported/v/people/ana.md' }],
      unchanged: ['Imported/v/drafts/skip.md'],
      creates: 'notes',
    });

    const s2 = await openTemp(home);
    expect(fs.readFileSync(vaultFile(home, 'Imported/v/people/ana.md'), 'utf8')).toBe('my own notes on Ana\n');
    expect(await call(s2, 'search_text', { query: 'quokka' })).toMatchObject({ total: 2, index: { stale: false } });
    expect(await call(s2, 'memory_status', {})).toMatchObject({ facts: 0 });
    expect(await call(s2, 'apply_import', { batchId: preview.batchId })).toMatchObject({ ok: false, reason: expect.stringContaining('already applied') });

    // A person edits one imported note; undo keeps it and says so.
    fs.appendFileSync(vaultFile(home, 'Imported/v/projects/beta.md'), '\nmy edit\n');
    const undone = await call(s2, 'undo_import', { batchId: preview.batchId });
    expect(undone).toMatchObject({
      ok: true,
      retired: ['note:Imported/v/projects/alpha.md'],
      kept: [{ path: 'Imported/v/projects/beta.md', reason: expect.stringContaining('edited') }],
    });
    expect(fs.existsSync(vaultFile(home, 'Imported/v/projects/alpha.md'))).toBe(false);
    expect(fs.readFileSync(vaultFile(home, 'Imported/v/projects/beta.md'), 'utf8')).toContain('my edit');
    expect(fs.readFileSync(vaultFile(home, 'Imported/v/people/ana.md'), 'utf8')).toBe('my own notes on Ana\n');
    expect(fs.existsSync(vaultFile(home, 'Imported/v/drafts/skip.md'))).toBe(true);
    expect(await call(s2, 'search_text', { query: 'quokka' })).toMatchObject({ total: 1 });
    expect(await call(s2, 'undo_import', { batchId: preview.batchId })).toMatchObject({ ok: false, reason: expect.stringContaining('already undone') });
    // Retired, not deleted.
    expect(await call(s2, 'restore_memory', { id: 'note:Imported/v/projects/alpha.md' })).toMatchObject({ ok: true });
    s2.store.close();
  });

  it('refuses a preview older than 15 minutes with its measured age, and unknown or unapplied batches', async () => {
    const home = tempHome('import-late');
    let t = Date.parse('2026-11-01T10:00:00Z');
    const s = await openTemp(home, () => t);
    const preview = await call(s, 'preview_import', { label: 'late', files: NOTES.slice(0, 1) });
    expect(await call(s, 'undo_import', { batchId: preview.batchId })).toMatchObject({ ok: false, reason: expect.stringContaining('never applied') });
    t += 15 * 60 * 1000 + 1000;
    expect(await call(s, 'apply_import', { batchId: preview.batchId })).toMatchObject({ ok: false, reason: expect.stringContaining('901 s ago') });
    expect(fs.existsSync(vaultFile(home, 'Imported/late/projects/alpha.md'))).toBe(false);
    expect(await call(s, 'apply_import', { batchId: '00000000-0000-4000-8000-000000000000' })).toMatchObject({ ok: false, reason: expect.stringContaining('no staged import') });
    expect(await call(s, 'undo_import', { batchId: '00000000-0000-4000-8000-000000000000' })).toMatchObject({ ok: false, reason: expect.stringContaining('no import') });
    expect(await call(s, 'apply_import', { batchId: 'not-a-uuid' })).toMatchObject({ ok: false });
    // Exactly at the limit still applies.
    const fresh = await call(s, 'preview_import', { label: 'ontime', files: NOTES.slice(0, 1) });
    t += 15 * 60 * 1000;
    expect(await call(s, 'apply_import', { batchId: fresh.batchId })).toMatchObject({ ok: true, created: ['Imported/ontime/projects/alpha.md'] });
    s.store.close();
  });
});
