import * as fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { sessionIdOf } from '../../src/core/history/importer';
import { isRefusal } from '../../src/core/refusal';
import type { Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { countTokens } from '../../src/core/text/tokens';
import { writeClaudeSession, type Step } from './helpers/claudeTranscript';
import { checkedCall } from './helpers/checkedCall';
import { transcriptFixtures } from './helpers/fixtures';
import { connectMcp } from './helpers/mcpClient';
import { openTemp, tempHome } from './helpers/tempStore';

type Json = Record<string, unknown>;
const REPLAY = '44444444-aaaa-4bbb-8ccc-000000000001';

async function call(s: Services, name: string, input: object): Promise<Json> {
  return checkedCall(s, name, input, { client: 'claude-code', workspace: '/work/demo' });
}

/**
 * The Codex fixture's tool outputs (real files: Markdown docs, source, shell output) replayed as
 * a finished Claude Code session, one request per output — its own Codex turn never finished,
 * so it cannot be archived as it is.
 */
async function importReplay(s: Services): Promise<void> {
  const outputs = queryRows(s.store.db, "SELECT text, blob FROM events WHERE session_id = 'ses_f45481625cac5367' AND kind = 'tool_result' ORDER BY seq").map((r) =>
    r.blob ? s.store.blobs.get(String(r.blob))!.toString('utf8') : String(r.text),
  );
  const steps = outputs.flatMap((out, i): Step[] => [
    { user: `show output ${i}` },
    { tool: 'Bash', id: `toolu_r${i}`, input: { command: `cat part-${i}` } },
    { result: out, id: `toolu_r${i}` },
    { assistant: `Read part ${i}.` },
  ]);
  await s.importer.importPaths([writeClaudeSession(tempHome('replay'), REPLAY, steps)]);
}

/** A store with every fixture session archived through the person's door (ranges derived by Recollect). */
async function archivedStore(): Promise<Services> {
  const s = await openTemp();
  await s.importer.importPaths([transcriptFixtures()]);
  await importReplay(s);
  for (const r of queryRows(s.store.db, "SELECT id FROM sessions WHERE source != 'recollect'")) {
    await s.chapters.door({ sessionId: String(r.id), intent: 'continue', client: 'test' });
  }
  return s;
}

describe('chapters_search', () => {
  let s: Services;
  beforeAll(async () => {
    s = await archivedStore();
  });

  it('never exceeds its budget: used is the measured size of the hits returned, and a trimmed list says so', async () => {
    const queries = ['the', 'sleep', 'update_entry_fields', 'CLAUDE.md codebase analyze', 'session hello', 'Todos modified'];
    let trimmed = 0;
    for (const query of queries) {
      for (const budget of [50, 120, 400, 2000]) {
        const r = await call(s, 'chapters_search', { query, budget });
        expect(r.ok).toBe(true);
        const b = r.budget as { requested: number; used: number; remaining: number };
        expect(b.requested).toBe(budget);
        expect(b.used).toBeLessThanOrEqual(budget);
        expect(b.used).toBe(countTokens(String(r.line)) + countTokens(JSON.stringify(r.results)));
        expect(b.remaining).toBe(budget - b.used);
        expect(r.shown).toBe((r.results as unknown[]).length);
        expect(Number(r.shown)).toBeLessThanOrEqual(Number(r.total));
        expect(String(r.note)).toContain("answered by this machine's store");
        if (Number(r.shown) < Math.min(Number(r.total), 50)) {
          trimmed++;
          expect(String(r.note)).toContain(`trimmed to the ${budget}-token budget`);
        }
      }
    }
    expect(trimmed).toBeGreaterThan(0);
  });

  it('results carry score, date, kind, title, path and topics, best first, and the path is the chapter itself', async () => {
    const r = await call(s, 'chapters_search', { query: 'sleep', budget: 2000 });
    const results = r.results as { score: number; date: string; kind: string; title: string; path: string; topics: string[]; id: string }[];
    expect(results.length).toBeGreaterThan(2);
    for (const h of results) {
      expect(Object.keys(h).sort()).toEqual(['date', 'id', 'kind', 'path', 'score', 'title', 'topics']);
      expect(fs.readFileSync(h.path, 'utf8')).toMatch(/sleep/i);
      expect(h.date).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    }
    expect(results.map((h) => h.score)).toEqual([...results.map((h) => h.score)].sort((a, b) => b - a));
    expect(String(r.line).split('\n')).toHaveLength(results.length);
  });

  it('finds plans as kind: plan, with every step any call of the plan named', async () => {
    const plans = await call(s, 'chapters_search', { query: 'Analyze codebase structure', kind: 'plan', budget: 1000 });
    const results = plans.results as { kind: string; title: string; id: string; topics: string[] }[];
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((h) => h.kind === 'plan')).toBe(true);
    expect(results[0]!.topics[0]).toBe('TodoWrite');
    const opened = await call(s, 'chapters_artifact', { ref: results[0]!.id, action: 'read' });
    expect((opened.lines as string[]).join('\n')).toContain('status: completed');
    // The chapter holding the plan is found as a chapter, not as a plan, when kind says so.
    const chapters = await call(s, 'chapters_search', { query: 'Analyze codebase structure', kind: 'chapter', budget: 1000 });
    expect((chapters.results as { kind: string }[]).every((h) => h.kind === 'chapter')).toBe(true);
  });

  it('ranks by any word, through the same scorer, when no document holds every word, and says so', async () => {
    const r = await call(s, 'chapters_search', { query: 'sleep zzzqqqnonexistent', budget: 400 });
    expect(Number(r.total)).toBeGreaterThan(0);
    expect(String(r.note)).toContain('no archived chapter or plan holds every word');
  });

  it('answers over the real MCP server too', async () => {
    const mcp = await connectMcp(s.store.home);
    try {
      const r = await mcp.call('chapters_search', { query: 'sleep', budget: 200 });
      expect(r.ok).toBe(true);
      expect((r.budget as { used: number }).used).toBeLessThanOrEqual(200);
      const refused = await mcp.call('chapters_artifact', { ref: '/etc/passwd', action: 'read' });
      expect(refused).toMatchObject({ ok: false });
    } finally {
      await mcp.close();
    }
  });
});

describe('the deterministic door on a long session', () => {
  it('groups requests into fewer, larger chapters until the table of contents fits, and still covers every event', async () => {
    const s = await openTemp();
    await s.importer.importPaths([transcriptFixtures()]);
    await importReplay(s);
    const sid = sessionIdOf('claude-code', REPLAY);
    const proposed = s.chapters.segment(sid, 'compact');
    if (isRefusal(proposed)) throw new Error(proposed.reason);
    // A long handoff note leaves the table of contents little room.
    const note = 'Finish wiring LM Studio into the chat handler, keep the streaming parser, then run the checks. '.repeat(68);
    const r = await s.chapters.door({ sessionId: sid, intent: 'continue', preset: 'compact', note, client: 'test' });
    if (isRefusal(r)) throw new Error(r.reason);
    expect(r.budget.used).toBeLessThanOrEqual(2000);
    expect(r.budget.note).toBeGreaterThan(1000);
    expect(r.chapters.length).toBeLessThan(proposed.ranges.length);
    expect(r.warnings[0]).toBe(`the table of contents would not fit the compact budget at ${proposed.ranges.length} chapters, so Recollect grouped the requests into ${r.chapters.length} larger chapters.`);
    expect(r.warnings.some((w) => w.includes('in no chapter'))).toBe(false);
    expect(r.chapters[0]!.startSeq).toBe(1);
    expect(r.chapters.at(-1)!.endSeq).toBe(proposed.archiveCeiling);
    r.chapters.slice(1).forEach((c, i) => expect(c.startSeq).toBe(r.chapters[i]!.endSeq + 1));
    s.store.close();
  });
});

describe('chapters_artifact', () => {
  let s: Services;
  let big: { id: string; path: string };
  beforeAll(async () => {
    s = await archivedStore();
    // The replayed Codex outputs give the biggest chapter.
    const row = queryRows(s.store.db, 'SELECT id, sha256 FROM chapters WHERE session_id = ? ORDER BY events DESC LIMIT 1', [sessionIdOf('claude-code', REPLAY)])[0]!;
    big = { id: String(row.id), path: s.store.blobs.pathOf(String(row.sha256)) };
  });

  it('read: 1-based windows, 200 lines by default, at most 400, with start, end and of', async () => {
    const all = fs.readFileSync(big.path, 'utf8').split('\n');
    if (all.at(-1) === '') all.pop();
    expect(all.length).toBeGreaterThan(400);
    const first = await call(s, 'chapters_artifact', { ref: big.id, action: 'read' });
    expect(first).toMatchObject({ ok: true, start: 1, end: 200, of: all.length, next: 201 });
    expect(first.lines).toEqual(all.slice(0, 200));
    const window = await call(s, 'chapters_artifact', { ref: big.path, action: 'read', start: 150, lines: 400 });
    expect(window).toMatchObject({ start: 150, end: 549, of: all.length });
    expect(window.lines).toEqual(all.slice(149, 549));
    const tail = await call(s, 'chapters_artifact', { ref: big.id, action: 'read', start: all.length - 2, lines: 50 });
    expect(tail).toMatchObject({ start: all.length - 2, end: all.length, next: null });
    const tooMany = await call(s, 'chapters_artifact', { ref: big.id, action: 'read', lines: 500 });
    expect(tooMany).toMatchObject({ ok: false, budget: { limit: 400, used: 500 } });
    const pastEnd = await call(s, 'chapters_artifact', { ref: big.id, action: 'read', start: all.length + 1 });
    expect(pastEnd).toMatchObject({ ok: false, budget: { limit: all.length, used: all.length + 1 } });
  });

  it('toc: the heading map with line numbers that read agrees with, packed into 400 tokens by default', async () => {
    const toc = await call(s, 'chapters_artifact', { ref: big.id, action: 'toc' });
    const headings = toc.headings as { line: number; level: number; text: string }[];
    expect((toc.budget as { used: number }).used).toBeLessThanOrEqual(400);
    expect((toc.budget as { used: number }).used).toBe(countTokens(JSON.stringify(headings)));
    expect(toc.truncated).toBe(true);
    expect(Number(toc.remaining)).toBe(Number(toc.total) - headings.length);
    for (const h of headings.slice(0, 5)) {
      const line = await call(s, 'chapters_artifact', { ref: big.id, action: 'read', start: h.line, lines: 1 });
      expect((line.lines as string[])[0]).toBe(`${'#'.repeat(h.level)} ${h.text}`);
    }
    // Headings inside event text (a tool output that is Markdown) are not headings of the chapter.
    const wide = await call(s, 'chapters_artifact', { ref: big.id, action: 'toc', budget: 8000 });
    const levels = (wide.headings as { level: number; text: string }[]).filter((h) => h.level === 2);
    expect(levels.every((h) => /^seq \d+ · /.test(h.text))).toBe(true);
  });

  it('search: matched blocks with totalMatches, truncated and remainingMatches within the budget', async () => {
    const r = await call(s, 'chapters_artifact', { ref: big.id, action: 'search', query: 'the' });
    const blocks = r.blocks as { startLine: number; endLine: number; matches: number; text: string }[];
    const all = fs.readFileSync(big.path, 'utf8').split('\n');
    const total = all.filter((l) => l.toLowerCase().includes('the')).length;
    expect(total).toBeGreaterThan(20);
    expect(r.totalMatches).toBe(total);
    const shown = blocks.reduce((n, b) => n + b.matches, 0);
    expect(r.remainingMatches).toBe(total - shown);
    expect(r.truncated).toBe(shown < total);
    expect((r.budget as { used: number }).used).toBeLessThanOrEqual(400);
    expect(r.truncated).toBe(true);
    for (const b of blocks) expect(b.text.toLowerCase()).toContain('the');
    const wide = await call(s, 'chapters_artifact', { ref: big.id, action: 'search', query: 'THE', budget: 8000 });
    expect(Number(wide.remainingMatches)).toBeLessThan(Number(r.remainingMatches));
  });

  it('opens only what the archive holds', async () => {
    expect(await call(s, 'chapters_artifact', { ref: '/etc/passwd' })).toMatchObject({ ok: false });
    expect(await call(s, 'chapters_artifact', { ref: 'ch_doesnotexist' })).toMatchObject({ ok: false });
    expect(await call(s, 'chapters_artifact', { ref: '../../etc/passwd' })).toMatchObject({ ok: false });
    // A large tool output the importer kept as a blob is an artifact too.
    const blob = queryRows(s.store.db, 'SELECT blob FROM events WHERE blob IS NOT NULL LIMIT 1')[0]!;
    expect(await call(s, 'chapters_artifact', { ref: String(blob.blob), action: 'read', lines: 3 })).toMatchObject({ ok: true, start: 1, end: 3 });
  });
});
