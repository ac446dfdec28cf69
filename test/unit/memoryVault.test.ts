import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTemp, tempHome } from './helpers/tempStore';
import { callTool as call } from './helpers/memoryCall';

const T0 = Date.parse('2026-11-01T10:00:00Z');

function vaultFile(home: string, rel: string): string {
  return path.join(home, 'vault', ...rel.split('/'));
}

/** Edits a file the way an editor does, and moves its mtime so no filesystem granularity can hide the change. */
function handEdit(file: string, content: string): void {
  fs.writeFileSync(file, content);
  const later = new Date(fs.statSync(file).mtimeMs + 5_000);
  fs.utimesSync(file, later, later);
}

describe('notes as Markdown in the vault', () => {
  it('writes every saved entry to its day log with a stable anchor the entry id resolves to', async () => {
    const home = tempHome('vault');
    const s = await openTemp(home, () => T0);
    const note = await call(s, 'remember', { statement: 'The staging cluster is called kestrel' });
    expect(note).toMatchObject({ ok: true, saved: 'note', path: 'daily/2026-11-01.md' });
    const fact = await call(s, 'remember', { statement: 'We deploy with Argo', subject: 'deploy tool', predicate: 'is', object: 'Argo', scope: 'project:web' });
    const logged = await call(s, 'remember_note', { text: 'Late-night fix for the login loop', timezone: '-03:00' });
    expect(logged).toMatchObject({ ok: true, saved: 'entry', day: '2026-11-01', path: 'daily/2026-11-01.md' });

    const day = fs.readFileSync(vaultFile(home, 'daily/2026-11-01.md'), 'utf8');
    const anchor = String(note.id).split('#')[1] as string;
    expect(day.startsWith('# 2026-11-01\n')).toBe(true);
    expect(day).toContain(`## 10:00 · vitest #${anchor}\n\nThe staging cluster is called kestrel\n`);
    expect(day).toContain('## 07:00 · vitest #'); // the -03:00 entry shows the person's own clock
    // The project's entries live in the project's folder.
    const projectDay = fs.readFileSync(vaultFile(home, 'projects/web/daily/2026-11-01.md'), 'utf8');
    expect(projectDay).toContain('We deploy with Argo');
    expect(String(fact.note_id)).toMatch(/^entry:projects\/web\/daily\/2026-11-01\.md#[0-9a-f]{12}$/);

    const read = await call(s, 'read_memory', { id: note.id });
    expect(read).toMatchObject({ ok: true, kind: 'entry', text: 'The staging cluster is called kestrel', stale: false });
    const readFactEntry = await call(s, 'read_memory', { id: fact.note_id });
    expect(readFactEntry.facts).toEqual([expect.objectContaining({ id: fact.id, object: 'Argo', status: 'current' })]);
    expect(await call(s, 'get_context', { query: 'kestrel' })).toMatchObject({ index: { stale: false, changed_files: 0 } });
    s.store.close();
  });

  it('files remember_note under the given date and refuses what a statement saved alone refuses, writing nothing', async () => {
    const home = tempHome('vault');
    const s = await openTemp(home, () => T0);
    const dated = await call(s, 'remember_note', { text: 'retro notes', date: '2026-10-30' });
    expect(dated).toMatchObject({ ok: true, path: 'daily/2026-10-30.md' });
    expect(fs.existsSync(vaultFile(home, 'daily/2026-10-30.md'))).toBe(true);

    const tooLong = await call(s, 'remember_note', { text: 'x'.repeat(4001) });
    expect(tooLong).toMatchObject({ ok: false, budget: { limit: 4000, used: 4001, unit: 'characters' } });
    expect(String((await call(s, 'remember_note', { text: 'bell\u0007' })).reason)).toContain('U+0007');
    expect(String((await call(s, 'remember_note', { text: 'del\u007f' })).reason)).toContain('U+007F');
    expect(String((await call(s, 'remember_note', { text: 'half \ud800 pair' })).reason)).toContain('not valid Unicode');
    expect(String((await call(s, 'remember_note', { text: 'x', date: '2026-02-30' })).reason)).toContain('calendar date');
    expect(String((await call(s, 'remember_note', { text: 'x', date: '30/10/2026' })).reason)).toContain('calendar date');
    expect(String((await call(s, 'remember_note', { text: 'x', timezone: 'Mars/Olympus' })).reason)).toContain('timezone');
    expect(String((await call(s, 'remember_note', { text: 'x', scope: 'team' })).reason)).toContain('scope');
    expect(await call(s, 'remember_note', { text: '' })).toMatchObject({ ok: false });
    expect(await call(s, 'remember_note', { text: 'x', extra: 1 })).toMatchObject({ ok: false });

    expect(await call(s, 'memory_status', {})).toMatchObject({ entries: 1, notes: 1 });
    expect(fs.readdirSync(path.join(home, 'vault', 'daily'))).toEqual(['2026-10-30.md']);
    s.store.close();
  });

  it('reports index.stale after a hand edit, and index_memory brings the index in line and clears it', async () => {
    const home = tempHome('vault');
    const s = await openTemp(home, () => T0);
    const saved = await call(s, 'remember', { statement: 'The build uses webpack' });
    const file = vaultFile(home, 'daily/2026-11-01.md');
    handEdit(file, fs.readFileSync(file, 'utf8').replace('webpack', 'rolldown'));

    expect(await call(s, 'get_context', { query: 'build tool' })).toMatchObject({ index: { stale: true, changed_files: 1 } });
    expect(await call(s, 'search_text', { query: 'webpack' })).toMatchObject({ total: 1, index: { stale: true, changed_files: 1 } });
    expect((await call(s, 'memory_status', {})).vault).toMatchObject({ stale: true, changed_files: 1 });

    const indexed = await call(s, 'index_memory', {});
    expect(indexed).toMatchObject({ ok: true, files: { modified: 1 }, entries: { edited: 1 }, index: { stale: false, changed_files: 0 } });
    expect(await call(s, 'search_text', { query: 'webpack' })).toMatchObject({ total: 0, index: { stale: false } });
    expect(await call(s, 'search_text', { query: 'rolldown' })).toMatchObject({ total: 1, hits: [expect.objectContaining({ id: saved.id })] });
    expect(await call(s, 'read_memory', { id: saved.id })).toMatchObject({ text: 'The build uses rolldown', edited_at: expect.any(String) });
    // A second run finds nothing to do.
    expect(await call(s, 'index_memory', {})).toMatchObject({ files: { added: 0, modified: 0, deleted: 0 } });
    s.store.close();
  });

  it('indexes free notes in chunks, with title, aliases and tags from front matter, and follows edits and deletions', async () => {
    const home = tempHome('vault');
    const s = await openTemp(home, () => T0);
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} about the ingestion pipeline and its retry policy number ${i}. `.repeat(4)).join('\n\n');
    const note = `---\ntitle: Ingestion design\naliases: [ingest, the pipeline]\ntags:\n  - architecture\n---\n# Ingestion\n\n${paragraphs}\n\nSee #backpressure too.\n`;
    fs.mkdirSync(vaultFile(home, 'design'), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'design/ingestion.md'), note);
    fs.mkdirSync(vaultFile(home, 'projects/web'), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'projects/web/frontend.md'), '# Frontend\n\nThe web frontend is built with Preact.\n');

    expect(await call(s, 'get_context', {})).toMatchObject({ index: { stale: true, changed_files: 2 } });
    const indexed = await call(s, 'index_memory', {});
    expect(indexed).toMatchObject({ files: { added: 2 }, index: { stale: false } });
    const status = await call(s, 'memory_status', {});
    expect(status.notes).toBe(2);
    expect(Number(status.chunks)).toBeGreaterThan(3); // the long note is split; the short one is one chunk

    const hit = await call(s, 'search_text', { query: 'retry policy number 7' });
    // The one chunk holding every word; chunks holding some of them follow as partial matches.
    expect((hit.hits as { matched: string }[]).filter((h) => h.matched === 'all')).toEqual([expect.objectContaining({ id: 'note:design/ingestion.md', kind: 'note', path: 'design/ingestion.md', chunk: expect.any(Number), matched: 'all' })]);
    const scoped = await call(s, 'search_text', { query: 'preact', scope: 'project:web' });
    expect(scoped.hits).toEqual([expect.objectContaining({ id: 'note:projects/web/frontend.md', scope: 'project:web' })]);

    const read = await call(s, 'read_memory', { id: 'note:design/ingestion.md' });
    expect(read).toMatchObject({ kind: 'note', title: 'Ingestion design', aliases: ['ingest', 'the pipeline'], tags: ['architecture', 'backpressure'], text: note });

    fs.rmSync(vaultFile(home, 'projects/web/frontend.md'));
    expect(await call(s, 'search_text', { query: 'preact' })).toMatchObject({ index: { stale: true, changed_files: 1 } });
    expect(await call(s, 'index_memory', {})).toMatchObject({ files: { deleted: 1 } });
    expect(await call(s, 'search_text', { query: 'preact' })).toMatchObject({ total: 0 });
    const map = await call(s, 'memory_map', {});
    expect((map.retired as { items: { id: string }[] }).items.map((i) => i.id)).toContain('note:projects/web/frontend.md');
    s.store.close();
  });

  it('gives entries a person writes into a day log their anchors, and retires blocks a person deletes', async () => {
    const home = tempHome('vault');
    const s = await openTemp(home, () => T0);
    const keep = await call(s, 'remember', { statement: 'Keep this entry' });
    const drop = await call(s, 'remember', { statement: 'Drop this entry' });
    const file = vaultFile(home, 'daily/2026-11-01.md');
    const dropAnchor = String(drop.id).split('#')[1] as string;
    let content = fs.readFileSync(file, 'utf8');
    const dropStart = content.indexOf(`\n## 10:00 · vitest #${dropAnchor}`);
    content = content.slice(0, dropStart + 1) + '## A thought of my own\n\nWritten by hand in VS Code.\n';
    handEdit(file, content.replace('# 2026-11-01\n', '# 2026-11-01\n\nA line above everything.\n'));

    const indexed = await call(s, 'index_memory', {});
    expect(indexed).toMatchObject({ entries: { added: 2, removed: 1 }, index: { stale: false } });
    const after = fs.readFileSync(file, 'utf8');
    expect(after.match(/^## \d\d:\d\d · vault #[0-9a-f]{12}$/gm)).toHaveLength(2);
    expect(after).toContain('A thought of my own\n\nWritten by hand in VS Code.');
    expect(after).toContain(`#${String(keep.id).split('#')[1]}`);

    const found = await call(s, 'search_text', { query: 'written by hand' });
    const id = (found.hits as { id: string }[])[0]?.id ?? '';
    expect(id).toMatch(/^entry:daily\/2026-11-01\.md#[0-9a-f]{12}$/);
    expect(after).toContain(`#${id.split('#')[1]}`);
    expect(await call(s, 'read_memory', { id: drop.id })).toMatchObject({ retired_at: expect.any(String) });
    expect(await call(s, 'search_text', { query: 'drop' })).toMatchObject({ total: 0 });
    s.store.close();
  });

  it('another process sharing the store sees its writes as indexed, not as a stale vault', async () => {
    const home = tempHome('vault');
    const a = await openTemp(home, () => T0);
    const b = await openTemp(home, () => T0 + 1000);
    await call(a, 'remember', { statement: 'written by process A' });
    await call(b, 'remember_note', { text: 'written by process B' });
    await call(a, 'remember_note', { text: 'and A again' });
    expect(await call(b, 'get_context', { query: 'written process' })).toMatchObject({ index: { stale: false } });
    expect(await call(a, 'search_text', { query: 'written' })).toMatchObject({ total: 2, index: { stale: false } });
    const day = fs.readFileSync(vaultFile(home, 'daily/2026-11-01.md'), 'utf8');
    expect(day.match(/^## /gm)).toHaveLength(3);
    a.store.close();
    b.store.close();
  });

  it('renders the day log of entries journaled by a build from before the vault (no file was ever written)', async () => {
    const home = tempHome('vault');
    const s = await openTemp(home, () => T0);
    // Exactly the line the previous build journaled: no file stat, so no record of a file.
    await s.store.commit(() => ({
      op: { op: 'memory.note.added', at: T0, id: 'entry:daily/2026-11-01.md#0123456789ab', path: 'daily/2026-11-01.md', day: '2026-11-01', text: 'saved by the old build', scope: 'global', source: 'cli', timezone: null, cites: [], factId: null },
      result: undefined,
    }));
    expect(await call(s, 'get_context', {})).toMatchObject({ index: { stale: true, changed_files: 1 } });
    expect(await call(s, 'memory_status', {})).toMatchObject({ notes: 1, entries: 1 });
    expect(await call(s, 'index_memory', {})).toMatchObject({ files: { rendered: 1 }, index: { stale: false } });
    expect(fs.readFileSync(vaultFile(home, 'daily/2026-11-01.md'), 'utf8')).toBe('# 2026-11-01\n\n## 10:00 · cli #0123456789ab\n\nsaved by the old build\n');
    // A later save that day appends below it.
    await call(s, 'remember', { statement: 'saved by this build' });
    expect(fs.readFileSync(vaultFile(home, 'daily/2026-11-01.md'), 'utf8')).toMatch(/old build\n\n## 10:00 · vitest #[0-9a-f]{12}\n\nsaved by this build\n$/);
    expect(await call(s, 'get_context', {})).toMatchObject({ index: { stale: false } });
    s.store.close();
  });
  it('writes back entries a power cut took from the end of a day log instead of retiring them', async () => {
    const home = tempHome('vault');
    let clock = T0;
    const s = await openTemp(home, () => clock);
    await call(s, 'remember', { statement: 'made it to disk' });
    const file = vaultFile(home, 'daily/2026-11-01.md');
    const durable = fs.readFileSync(file, 'utf8');
    clock += 60_000;
    const lost = await call(s, 'remember', { statement: 'lost in the page cache' });
    // What the disk holds after the cut: the older content, with the older modification time.
    fs.writeFileSync(file, durable);
    fs.utimesSync(file, new Date(T0 + 1000), new Date(T0 + 1000));

    expect(await call(s, 'get_context', {})).toMatchObject({ index: { stale: true } });
    expect(await call(s, 'index_memory', {})).toMatchObject({ entries: { removed: 0, rewritten: 1 }, index: { stale: false } });
    expect(fs.readFileSync(file, 'utf8')).toContain(`#${String(lost.id).split('#')[1]}\n\nlost in the page cache\n`);
    expect(await call(s, 'search_text', { query: 'page cache' })).toMatchObject({ total: 1 });
    s.store.close();
  });
});
