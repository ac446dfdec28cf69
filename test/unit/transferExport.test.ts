import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Services } from '../../src/core/services';
import { countTokens } from '../../src/core/text/tokens';
import { parseDocument, type ParsedItem } from '../../src/core/transfer/exportFormat';
import { callTool as call } from './helpers/memoryCall';
import { CLI } from './helpers/mcpClient';
import { openTemp, tempHome } from './helpers/tempStore';

const T0 = Date.parse('2026-10-01T09:00:00Z');

function vaultFile(home: string, rel: string): string {
  return path.join(home, 'vault', ...rel.split('/'));
}

/** Every page, following nextSection/nextItem as a client would. */
async function allPages(s: Services): Promise<Record<string, unknown>[]> {
  const pages: Record<string, unknown>[] = [];
  let input: Record<string, unknown> = {};
  for (let i = 0; i < 500; i++) {
    const page = await call(s, 'export_memory', input);
    expect(page.ok).toBe(true);
    pages.push(page);
    if (page.nextSection === undefined) return pages;
    input = { section: page.nextSection, offset: page.nextItem };
  }
  throw new Error('export never finished');
}

async function wholeExport(s: Services): Promise<string> {
  const page = await s.transfer.exportMemory({}, 100_000_000);
  if (!('document' in page)) throw new Error(page.reason);
  expect(page.complete).toBe(true);
  return page.document;
}

/** A memory with every kind of item: superseded and retired facts, entries on two days, notes, a retired note. */
async function richMemory(home: string): Promise<Services> {
  let t = T0;
  const s = await openTemp(home, () => (t += 1000));
  await call(s, 'remember', { statement: 'The deploy target is staging-eu.', subject: 'deploy', predicate: 'target', object: 'staging-eu', source: 'claude-code' });
  await call(s, 'save_memory', { subject: 'deploy', predicate: 'target', object: 'prod-eu' });
  await call(s, 'save_memory', { subject: 'deploy', predicate: 'target', object: 'prod-us', scope: 'project:web' });
  const gone = await call(s, 'save_memory', { subject: 'old laptop', predicate: 'password hint', object: 'blue' });
  await call(s, 'retire_memory', { id: gone.id });
  await call(s, 'remember_note', { text: 'Met with Ana about the ```rollout``` plan.', date: '2026-09-30' });
  const dropped = await call(s, 'remember_note', { text: 'An entry the owner asked to forget.', date: '2026-09-30' });
  await call(s, 'remember_note', { text: 'Second day, project scope.', scope: 'project:web', timezone: '-03:00' });
  await call(s, 'retire_memory', { id: dropped.id });
  fs.mkdirSync(vaultFile(home, 'ops'), { recursive: true });
  fs.writeFileSync(vaultFile(home, 'ops/runbook.md'), '---\ntitle: Runbook\naliases: [ops book]\ntags: [ops]\n---\n# Runbook\n\n````sh\nmake restart-worker\n````\r\n\n### fact not-a-heading\n');
  fs.mkdirSync(vaultFile(home, 'projects/web'), { recursive: true });
  fs.writeFileSync(vaultFile(home, 'projects/web/design.md'), '# Design\n\nThe web app uses server components.\n');
  fs.writeFileSync(vaultFile(home, 'ops/old.md'), '# Old\n\nDecommissioned hosts list.\n');
  await call(s, 'index_memory', {});
  await call(s, 'retire_memory', { id: 'note:ops/old.md' });
  return s;
}

function sameKeys(item: ParsedItem): Record<string, unknown> {
  if (item.kind !== 'note') return { kind: item.kind, ...item.meta };
  // A note is known by its path; its record id and index time are internal and are re-made. Its
  // file time comes back through utimes, whose precision is a microsecond; note_date must match.
  const internal = new Set(['id', 'indexed_at', 'indexed_at_iso']);
  const rest = Object.fromEntries(Object.entries(item.meta).filter(([k]) => !internal.has(k)));
  return { kind: 'note', ...rest, mtime_ms: Math.round(Number(item.meta.mtime_ms)), body: item.body };
}

describe('export_memory', () => {
  it('pages concatenated equal one whole export, each reply within its token budget, none cut', async () => {
    const s = await openTemp();
    // Enough facts (with long values) and notes that one reply cannot hold them.
    for (let i = 0; i < 60; i++) await call(s, 'save_memory', { subject: `service ${i}`, predicate: 'owner', object: `team ${i} `.repeat(40) });
    for (let i = 0; i < 20; i++) await call(s, 'remember_note', { text: `log line ${i} `.repeat(60) });
    const pages = await allPages(s);
    expect(pages.length).toBeGreaterThan(3);
    for (const p of pages) expect(countTokens(JSON.stringify(p))).toBeLessThanOrEqual(8000);
    const joined = pages.map((p) => String(p.document)).join('');
    expect(joined).toBe(await wholeExport(s));
    const parsed = parseDocument(joined);
    if ('problem' in parsed) throw new Error(parsed.problem);
    expect(parsed.items.filter((i) => i.kind === 'fact')).toHaveLength(60);
    expect(parsed.items.filter((i) => i.kind === 'entry')).toHaveLength(20);
    expect(pages[0]).toMatchObject({ format: 'renor-export/v1', counts: { facts: 60, daily_entries: 20, notes: 0 }, nextSection: 'ledger' });
    expect(pages.at(-1)).toMatchObject({ complete: true });
    expect(pages.at(-1)?.nextSection).toBeUndefined();
    s.store.close();
  });

  it('puts an item larger than a page alone on its page instead of cutting it', async () => {
    const home = tempHome('export-big');
    const s = await openTemp(home);
    const big = `# Big\n\n${'a long paragraph of words that keeps going '.repeat(1500)}\n`;
    fs.mkdirSync(vaultFile(home, ''), { recursive: true });
    fs.writeFileSync(vaultFile(home, 'big.md'), big);
    await call(s, 'save_memory', { subject: 'a', predicate: 'b', object: 'c' });
    const pages = await allPages(s);
    const alone = pages.find((p) => (p.page as { oversized_item?: string }).oversized_item);
    expect(alone).toBeDefined();
    expect(String(alone?.document)).toContain(big);
    expect(pages.map((p) => String(p.document)).join('')).toBe(await wholeExport(s));
    s.store.close();
  });

  it('refuses an offset past the end of a section, with the measured count', async () => {
    const s = await openTemp();
    await call(s, 'save_memory', { subject: 'a', predicate: 'b', object: 'c' });
    expect(await call(s, 'export_memory', { section: 'ledger', offset: 5 })).toMatchObject({ ok: false, budget: { limit: 1, used: 5, unit: 'items' } });
    expect(await call(s, 'export_memory', { section: 'nowhere' })).toMatchObject({ ok: false });
    s.store.close();
  });

  it('export → restore into an empty store reproduces every fact with history, entry, note and retired item', async () => {
    const homeA = tempHome('export-a');
    const a = await richMemory(homeA);
    const pages = await allPages(a);
    const document = pages.map((p) => String(p.document)).join('');
    expect(pages[0]?.counts).toMatchObject({ facts: 3, superseded_facts: 1, current_facts: 2, daily_entries: 3, notes: 2, retired: { facts: 1, entries: 1, notes: 1 } });

    // Through the real CLI, in its own process.
    const homeB = tempHome('export-b');
    const file = path.join(homeB, '..', `${path.basename(homeB)}-export.md`);
    fs.writeFileSync(file, document);
    const r = spawnSync(process.execPath, [CLI, 'restore', file], { env: { ...process.env, RECOLLECT_HOME: homeB }, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, restored: { facts: 4, entries: 4, notes: 3, retired: { facts: 1, entries: 1, notes: 1 } } });

    const b = await openTemp(homeB);
    const again = parseDocument(await wholeExport(b));
    const original = parseDocument(document);
    if ('problem' in again || 'problem' in original) throw new Error('unparseable export');
    expect(again.items.map(sameKeys)).toEqual(original.items.map(sameKeys));

    // The restored memory answers like the original.
    for (const scope of [undefined, 'project:web']) {
      const q = { subject: 'deploy', include_history: true, ...(scope ? { scope } : {}) };
      expect(await call(b, 'retrieve_memory', q)).toEqual(await call(a, 'retrieve_memory', q));
    }
    const hits = await call(b, 'search_text', { query: 'restart worker' });
    expect(hits).toMatchObject({ total: 1, index: { stale: false } });
    expect(await call(b, 'memory_status', {})).toMatchObject({ facts: 3, entries: 3, retired: { facts: 1, entries: 1, notes: 1 } });
    for (const rel of ['daily/2026-09-30.md', 'ops/runbook.md', 'projects/web/design.md']) {
      expect(fs.readFileSync(vaultFile(homeB, rel), 'utf8')).toBe(fs.readFileSync(vaultFile(homeA, rel), 'utf8'));
    }
    // A retired note comes back with restore_memory, as it would have in the original.
    expect(await call(b, 'restore_memory', { id: 'note:ops/old.md' })).toMatchObject({ ok: true });
    expect(fs.readFileSync(vaultFile(homeB, 'ops/old.md'), 'utf8')).toBe('# Old\n\nDecommissioned hosts list.\n');

    // Restoring again, into a store that now holds something, is refused and changes nothing.
    const refused = await b.transfer.restore(document);
    expect(refused).toMatchObject({ ok: false, reason: expect.stringContaining('empty store') });
    expect(await b.transfer.restore('# something else\n')).toMatchObject({ ok: false, reason: expect.stringContaining('renor-export/v1') });
    a.store.close();
    b.store.close();
  });
});
