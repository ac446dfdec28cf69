import { localAccess } from '../../src/core/owner/storeAccess';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRefusal } from '../../src/core/refusal';
import { applyImport, exportAll, importBatches, previewImport, readMarkdownSources, toolCaller, undoImport } from '../../src/host/transferFlow';
import { callTool as call } from './helpers/memoryCall';
import { openTemp, tempHome } from './helpers/tempStore';

const T0 = Date.parse('2026-10-01T09:00:00Z');

describe('the Export Memory… and Import Memory… commands’ flow (dialogs aside), on real stores', () => {
  it('pages export_memory through every section into one document that restores into an empty store', async () => {
    let clock = T0;
    const s = await openTemp(undefined, () => (clock += 1000));
    for (let i = 0; i < 40; i++) {
      await call(s, 'save_memory', { subject: `service ${i}`, predicate: 'runbook', object: `Restart service ${i} with the blue-green script, then watch the error rate for ten minutes. `.repeat(3) });
    }
    await call(s, 'remember_note', { text: 'Exported on a Monday' });
    const seen: string[] = [];
    const out = await exportAll(toolCaller(localAccess(s), 'vitest'), ({ section }) => seen.push(section));
    if (isRefusal(out)) throw new Error(out.reason);
    expect(out.pages).toBeGreaterThan(1);
    expect(seen).toHaveLength(out.pages);
    expect(out.document).toContain('service 39');
    expect(out.document).toContain('Exported on a Monday');

    const target = await openTemp(undefined, () => T0 + 10_000_000);
    const restored = await target.transfer.restore(out.document);
    expect(restored).toMatchObject({ ok: true });
    expect(target.memory.status()).toMatchObject({ facts: 40, entries: s.memory.status().entries });
    s.store.close();
    target.store.close();
  });

  it('reads a picked folder recursively (hidden folders skipped) and refuses a file that is not UTF-8 by name', () => {
    const dir = path.join(tempHome('pick'), 'team notes');
    fs.mkdirSync(path.join(dir, 'deep'), { recursive: true });
    fs.mkdirSync(path.join(dir, '.obsidian'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'a.md'), '# A\n');
    fs.writeFileSync(path.join(dir, 'deep', 'b.md'), '# B\n');
    fs.writeFileSync(path.join(dir, '.obsidian', 'c.md'), '# C\n');
    fs.writeFileSync(path.join(dir, 'readme.txt'), 'not markdown');
    expect(readMarkdownSources([dir])).toEqual({ label: 'team notes', files: [{ relativePath: 'a.md', markdown: '# A\n' }, { relativePath: 'deep/b.md', markdown: '# B\n' }] });
    expect(readMarkdownSources([path.join(dir, 'deep', 'b.md')])).toEqual({ label: 'deep', files: [{ relativePath: 'b.md', markdown: '# B\n' }] });
    fs.writeFileSync(path.join(dir, 'deep', 'latin1.md'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(readMarkdownSources([dir])).toMatchObject({ ok: false, reason: expect.stringContaining('latin1.md is not valid UTF-8') });
    expect(readMarkdownSources([path.join(dir, 'readme.txt')])).toMatchObject({ ok: false, reason: expect.stringContaining('no .md files') });
  });

  it('splits a large pick into batches preview_import accepts', () => {
    const many = Array.from({ length: 250 }, (_, i) => ({ relativePath: `n${i}.md`, markdown: 'x\n' }));
    expect(importBatches(many).map((b) => b.length)).toEqual([100, 100, 50]);
    const big = Array.from({ length: 5 }, (_, i) => ({ relativePath: `b${i}.md`, markdown: 'y'.repeat(60 * 1024) }));
    expect(importBatches(big).map((b) => b.length)).toEqual([2, 2, 1]);
  });

  it('previews with conflicts, applies, and undoes through the import tools, never overwriting a file', async () => {
    const home = tempHome('import');
    const s = await openTemp(home, () => T0);
    const existing = path.join(home, 'vault', 'Imported', 'team', 'kept.md');
    fs.mkdirSync(path.dirname(existing), { recursive: true });
    fs.writeFileSync(existing, '# Mine\n');
    const callTool = toolCaller(localAccess(s), 'vitest');
    const preview = await previewImport(callTool, { label: 'team', files: [{ relativePath: 'new.md', markdown: '# New\n\nThe staging database moved to db-2.\n' }, { relativePath: 'kept.md', markdown: '# Theirs\n' }] });
    if (isRefusal(preview)) throw new Error(preview.reason);
    expect(preview).toMatchObject({ folder: 'Imported/team/', files: 2, wouldCreate: ['Imported/team/new.md'], conflicts: ['Imported/team/kept.md'] });
    expect(preview.batchIds).toHaveLength(1);

    expect(await applyImport(callTool, preview.batchIds)).toEqual({ ok: true, created: 1, conflicts: ['Imported/team/kept.md'] });
    expect(fs.readFileSync(existing, 'utf8')).toBe('# Mine\n');
    expect(await call(s, 'search_text', { query: 'staging database' })).toMatchObject({ total: 1 });

    expect(await undoImport(callTool, preview.batchIds)).toEqual({ ok: true, retired: 1 });
    expect(fs.existsSync(path.join(home, 'vault', 'Imported', 'team', 'new.md'))).toBe(false);
    expect(fs.readFileSync(existing, 'utf8')).toBe('# Mine\n');
    expect(await undoImport(callTool, preview.batchIds)).toMatchObject({ ok: false, reason: expect.stringContaining('already undone') });

    const bad = await previewImport(callTool, { label: 'bad/label', files: [{ relativePath: 'x.md', markdown: 'x' }] });
    expect(bad).toMatchObject({ ok: false });
    s.store.close();
  });
});
