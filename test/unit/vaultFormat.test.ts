import { createRequire } from 'node:module';
import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { prunedWords, DocumentCounts } from '../../src/core/memory/recall/queryPruning';
import { contentWords, asksPermission } from '../../src/core/memory/recall/queryWords';
import { chunkNote } from '../../src/core/memory/vault/chunking';
import { parseDailyFile, renderDailyFile, removeEntry, insertEntry, renderEntry } from '../../src/core/memory/vault/dailyFile';
import { parseFrontMatter } from '../../src/core/memory/vault/frontMatter';
import { classifyPath } from '../../src/core/memory/vault/vaultLayout';
import { createFtsTableSql } from '../../src/core/search/ftsSearch';
import { analyze } from '../../src/core/text/analyzer';

function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (s * 1664525 + 1013904223) >>> 0), s / 2 ** 32);
  return { next, int: (a: number, b: number) => a + Math.floor(next() * (b - a + 1)), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T };
}

const PIECES = ['alpha', 'beta', '## heading-like', '\\## escaped', '\\\\## twice', '  indented', '', '# 2026-01-01', '```', 'ünï', '🚀', 'tab\there', 'end #0123456789ab'];

describe('the day-log format', () => {
  it('reads back every entry text exactly as written, whatever lines it holds', () => {
    const r = rng(11);
    for (let round = 0; round < 300; round++) {
      const entries = Array.from({ length: r.int(1, 5) }, (_, i) => ({
        anchor: (round * 10 + i).toString(16).padStart(12, '0'),
        at: Date.parse('2026-11-01T10:00:00Z') + i * 60_000,
        timezone: r.pick([null, '-03:00', 'Asia/Tokyo']),
        source: r.pick(['cli', 'claude code', 'a\nb']),
        text: Array.from({ length: r.int(1, 6) }, () => r.pick(PIECES)).join('\n').trim() || 'x',
      }));
      const parsed = parseDailyFile(renderDailyFile('2026-11-01', entries));
      expect(parsed.preamble.text).toBe('');
      expect(parsed.sections.map((s) => [s.anchor, s.text])).toEqual(entries.map((e) => [e.anchor, e.text]));
    }
  });

  it('takes one block out and puts it back in its place', () => {
    const entries = ['one', 'two', 'three'].map((text, i) => ({ anchor: `00000000000${i}`, at: i, timezone: null, source: 'cli', text }));
    const file = renderDailyFile('2026-11-01', entries);
    const without = removeEntry(file, '000000000001') as string;
    expect(parseDailyFile(without).sections.map((s) => s.text)).toEqual(['one', 'three']);
    expect(insertEntry(without, renderEntry(entries[1]!), '000000000002')).toBe(file);
    expect(removeEntry(file, 'ffffffffffff')).toBeUndefined();
  });
});

describe('note chunks', () => {
  it('are consecutive slices that join back to the note byte for byte', () => {
    const r = rng(5);
    for (let round = 0; round < 100; round++) {
      const parts = Array.from({ length: r.int(0, 60) }, () => r.pick(['word ', 'longer sentence here. ', '\n', '\n\n', '# Heading\n', '🚀', '\r\n', 'x'.repeat(r.int(1, 3000))]));
      const note = parts.join('');
      const chunks = chunkNote(note);
      expect(chunks.map((c) => c.text).join('')).toBe(note);
      for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(2002);
      for (const c of chunks) expect(/[\uD800-\uDBFF]$/.test(c.text)).toBe(false);
    }
  });
});

describe('front matter and paths', () => {
  it('reads title, aliases, tags, source and dates from the small YAML subset', () => {
    const fm = parseFrontMatter('---\ntitle: "Deploys"\naliases:\n  - ship\n  - release\ntags: [ops, "#infra"]\nsource: claude-code\nsession_date: 2026-10-12\n---\nbody');
    expect(fm).toEqual({ title: 'Deploys', aliases: ['ship', 'release'], tags: ['ops', 'infra'], source: 'claude-code', date: Date.parse('2026-10-12') });
    expect(parseFrontMatter('no front matter')).toEqual({ aliases: [], tags: [] });
  });

  it('reads scope and kind from the path and refuses paths that leave the vault', () => {
    expect(classifyPath('daily/2026-11-01.md')).toEqual({ scope: 'global', kind: 'daily', day: '2026-11-01' });
    expect(classifyPath('projects/web/daily/2026-11-01.md')).toEqual({ scope: 'project:web', kind: 'daily', day: '2026-11-01' });
    expect(classifyPath('projects/web/history/a.md')).toEqual({ scope: 'project:web', kind: 'history' });
    expect(classifyPath('notes/a.md')).toEqual({ scope: 'global', kind: 'note' });
    for (const bad of ['../x.md', 'a/../../x.md', '/etc/x.md', 'C:/x.md', 'a\\b.md', '.obsidian/x.md', 'x.txt', 'projects/x.md', 'projects/bad slug/x.md']) {
      expect(classifyPath(bad), bad).toHaveProperty('problem');
    }
  });
});

describe('query words', () => {
  it('keeps the words that carry meaning, split as the index splits them', () => {
    expect(contentWords("Can I deploy the chat-helpers on Friday? Don't break prod")).toEqual(['deploy', 'chat', 'helpers', 'friday', 'break', 'prod']);
    expect(contentWords('what is it?')).toEqual([]);
    expect(asksPermission('Am I allowed to push to main?')).toBe(true);
    expect(asksPermission('Can we skip the review?')).toBe(true);
    expect(asksPermission('Which build tool do we use?')).toBe(false);
  });
});

describe('get_context query pruning', () => {
  it('keeps the rarest words and always one that matches, over a Zipf-like store', async () => {
    const SQL = await initSqlJs({ locateFile: () => createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm') });
    const db = new SQL.Database();
    db.exec(createFtsTableSql('memory_fts', ['ref']));
    const r = rng(3);
    const vocab = Array.from({ length: 300 }, (_, i) => `w${i}`);
    const now = Date.parse('2026-11-01T00:00:00Z');
    db.exec('BEGIN');
    for (let i = 0; i < 6000; i++) {
      // Zipf-ish: low word numbers are common.
      const words = Array.from({ length: r.int(3, 25) }, () => vocab[Math.floor(vocab.length * r.next() ** 3)] as string);
      db.run('INSERT INTO memory_fts(terms, body, created_at, scope, ref) VALUES (?, ?, ?, ?, ?)', [analyze(words.join(' ')), words.join(' '), now - r.int(0, 800) * 86_400_000, r.pick(['global', 'project:a']), `x:${i}`]);
    }
    db.exec('COMMIT');
    // Pruning keeps the rarest words and always at least one that matches.
    const counts = new DocumentCounts();
    const pruned = prunedWords(db, 0, 'memory_fts', ['w0', 'w1', 'w299', 'nothere'], counts);
    expect(pruned.kept).toContain('w299');
    expect(pruned.kept).toContain('nothere');
    expect(pruned.dropped).toContain('w0');
    expect(prunedWords(db, 0, 'memory_fts', ['w0'], counts).kept).toEqual(['w0']);
    db.close();
  });
});
