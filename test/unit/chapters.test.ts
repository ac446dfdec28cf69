import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseChapter } from '../../src/core/chapters/render';
import { sessionIdOf } from '../../src/core/history/importer';
import type { Services } from '../../src/core/services';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { countTokens } from '../../src/core/text/tokens';
import { writeClaudeSession, type Step } from './helpers/claudeTranscript';
import { checkedCall } from './helpers/checkedCall';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome } from './helpers/tempStore';

type Json = Record<string, unknown>;
type Range = { startSeq: number; endSeq: number; title: string; summary: string };

async function call(s: Services, name: string, input: object, client = 'claude-code'): Promise<Json> {
  return checkedCall(s, name, input, { client, workspace: '/work/demo' });
}

function rangesOf(seg: Json): Range[] {
  return (seg.ranges as Range[]).map(({ startSeq, endSeq, title, summary }) => ({ startSeq, endSeq, title, summary }));
}

/** What the store holds for a session, full text included (from the blob store when large). */
function storedEvents(s: Services, sessionId: string) {
  return queryRows(s.store.db, 'SELECT seq, kind, text, blob, tool_input FROM events WHERE session_id = ? ORDER BY seq', [sessionId]).map((r) => ({
    seq: Number(r.seq),
    kind: String(r.kind),
    text: r.blob ? s.store.blobs.get(String(r.blob))!.toString('utf8') : String(r.text),
    blob: r.blob,
    input: r.tool_input === null ? null : String(r.tool_input),
  }));
}

function archiveFootprint(s: Services) {
  const n = (sql: string) => Number(queryScalar(s.store.db, sql));
  const journal = fs.readFileSync(path.join(s.store.home, 'journal.jsonl'), 'utf8');
  const blobs = fs.readdirSync(path.join(s.store.home, 'blobs'), { recursive: true }).length;
  return {
    chapters: n('SELECT count(*) FROM chapters'),
    plans: n('SELECT count(*) FROM chapter_plans'),
    children: n('SELECT count(*) FROM child_sessions'),
    chapterOps: (journal.match(/"op":"chapters\./g) ?? []).length,
    blobs,
  };
}

const FINISHED: Step[] = [
  { user: 'Set up the parser' },
  { tool: 'Bash', id: 'toolu_a1', input: { command: 'ls' } },
  { result: 'src\ntest', id: 'toolu_a1' },
  { assistant: 'The parser lives in src.' },
  { user: 'Now add tests' },
  { tool: 'TodoWrite', id: 'toolu_a2', input: { todos: [{ content: 'Write parser tests', status: 'in_progress', activeForm: 'Writing' }, { content: 'Run them', status: 'pending', activeForm: 'Running' }] } },
  { result: 'Todos have been modified successfully.', id: 'toolu_a2' },
  { assistant: 'Tests are planned.' },
];

describe('the archive ceiling', () => {
  let s: Services;
  beforeAll(async () => {
    s = await openTemp();
    await s.importer.importPaths([transcriptFixtures()]);
  });

  it('is never inside an open turn: a last run whose tool call has no result is left out', async () => {
    const dir = tempHome('open-turn');
    const id = '11111111-aaaa-4bbb-8ccc-000000000001';
    writeClaudeSession(dir, id, [...FINISHED, { user: 'Run the tests' }, { assistant: 'Running them.' }, { tool: 'Bash', id: 'toolu_open', input: { command: 'npm test' } }]);
    await s.importer.importPaths([dir]);
    const seg = await call(s, 'chapters_segment', { sessionId: sessionIdOf('claude-code', id) });
    expect(seg.sessionEvents).toBe(11);
    expect(seg.archiveCeiling).toBe(8);
    expect(seg.eventCount).toBe(8);
    expect(seg.openTurn).toEqual({ fromSeq: 9, reason: 'the Bash call at seq 11 has no result yet' });
    expect(Math.max(...(seg.ranges as Range[]).map((r) => r.endSeq))).toBe(8);
    // Archiving into the open turn is refused with the numbers, and nothing is written.
    const before = archiveFootprint(s);
    const refused = await call(s, 'chapters_continue', { sessionId: sessionIdOf('claude-code', id), chapters: [{ startSeq: 1, endSeq: 10, title: 'Too far', summary: '' }], handoffNote: 'x' });
    expect(refused).toMatchObject({ ok: false, budget: { limit: 8, used: 10, unit: 'items' } });
    expect(String(refused.reason)).toContain('unfinished turn');
    expect(archiveFootprint(s)).toEqual(before);
  });

  it('a request with no reply yet, or a tool result not yet answered, is an open turn too', async () => {
    const dir = tempHome('open-turn-2');
    const unanswered = '11111111-aaaa-4bbb-8ccc-000000000002';
    const pendingResult = '11111111-aaaa-4bbb-8ccc-000000000003';
    writeClaudeSession(dir, unanswered, [...FINISHED, { user: 'And the docs?' }]);
    writeClaudeSession(dir, pendingResult, [...FINISHED, { user: 'Check' }, { tool: 'Bash', id: 'toolu_b', input: { command: 'ls' } }, { result: 'ok', id: 'toolu_b' }]);
    await s.importer.importPaths([dir]);
    const a = await call(s, 'chapters_segment', { sessionId: sessionIdOf('claude-code', unanswered) });
    expect([a.archiveCeiling, (a.openTurn as Json).reason]).toEqual([8, 'the request at seq 9 has no assistant reply after it']);
    const b = await call(s, 'chapters_segment', { sessionId: sessionIdOf('claude-code', pendingResult) });
    expect([b.archiveCeiling, (b.openTurn as Json).reason]).toEqual([8, 'the tool result at seq 11 has not been answered by the assistant yet']);
  });

  it('on every imported fixture session the ceiling ends a run, and whatever lies above it is one unfinished run', async () => {
    const sessions = queryRows(s.store.db, "SELECT id FROM sessions WHERE source != 'recollect'").map((r) => String(r.id));
    expect(sessions.length).toBeGreaterThan(15);
    const open: string[] = [];
    for (const id of sessions) {
      const seg = await call(s, 'chapters_segment', { sessionId: id });
      const events = queryRows(s.store.db, 'SELECT seq, run_id, kind FROM events WHERE session_id = ? ORDER BY seq', [id]);
      const ceiling = Number(seg.archiveCeiling);
      const above = events.filter((e) => Number(e.seq) > ceiling);
      const below = events.filter((e) => Number(e.seq) <= ceiling);
      if (above.length) {
        open.push(id);
        expect(new Set(above.map((e) => e.run_id)).size).toBe(1);
        // The ceiling never cuts a run: no event at or below it shares the open run.
        expect(below.some((e) => e.run_id === above[0]!.run_id)).toBe(false);
        expect(above.at(-1)!.kind).not.toBe('assistant');
      }
      for (const r of seg.ranges as Range[]) expect(r.endSeq).toBeLessThanOrEqual(ceiling);
    }
    // The codex rollouts end mid-turn and one VS Code chat ends with an unanswered, cancelled request.
    expect(open).toEqual(expect.arrayContaining(['ses_927473a4d4d3f47a', 'ses_f45481625cac5367', 'ses_ffef05254c693305']));
  });
});

describe('chapters are verbatim', () => {
  it('every chapter of every fixture session gives back its source events byte for byte, and its sha256, seqs and tokens are its own', async () => {
    const s = await openTemp();
    await s.importer.importPaths([transcriptFixtures()]);
    const sessions = queryRows(s.store.db, "SELECT id FROM sessions WHERE source != 'recollect'").map((r) => String(r.id));
    let chapters = 0;
    let fromBlobs = 0;
    for (const id of sessions) {
      const seg = await call(s, 'chapters_segment', { sessionId: id });
      if (!(seg.ranges as Range[]).length) continue;
      const res = await call(s, 'chapters_continue', { sessionId: id, chapters: rangesOf(seg), handoffNote: 'carry on' });
      expect(res.ok).toBe(true);
      const events = storedEvents(s, id);
      for (const c of res.chapters as { id: string; sha256: string; startSeq: number; endSeq: number; tokens: number; path: string }[]) {
        const markdown = fs.readFileSync(c.path, 'utf8');
        expect(createHash('sha256').update(markdown).digest('hex')).toBe(c.sha256);
        expect(c.tokens).toBe(countTokens(markdown));
        const source = events.filter((e) => e.seq >= c.startSeq && e.seq <= c.endSeq);
        const parsed = parseChapter(markdown);
        expect(parsed.map((p) => p.seq)).toEqual(source.map((e) => e.seq));
        parsed.forEach((p, i) => {
          const e = source[i]!;
          expect(p.kind).toBe(e.kind);
          expect(Buffer.from(p.text).equals(Buffer.from(e.text))).toBe(true);
          if (e.input !== null && e.input !== e.text) expect(p.input).toBe(e.input);
          if (e.blob) fromBlobs++;
        });
        chapters++;
      }
    }
    expect(chapters).toBeGreaterThan(10);
    // Large tool outputs (kept in the blob store, not inline) are in the chapters whole.
    expect(fromBlobs).toBeGreaterThan(0);
    s.store.close();
  });

  it('hostile text (fences, fake event headings, a trailing newline, emptiness) survives the round trip', async () => {
    const s = await openTemp();
    const dir = tempHome('hostile');
    const id = '22222222-aaaa-4bbb-8ccc-000000000001';
    const nasty = ['```\nclosing fence\n```', '````\n## seq 99 · user\n````', 'ends with newline\n', '   ', '<script>alert(1)</script> `inline` ~~~'];
    writeClaudeSession(dir, id, nasty.flatMap((t, i) => [{ user: `q${i}` }, { tool: 'Bash', id: `toolu_${i}`, input: { command: t } }, { result: t, id: `toolu_${i}` }, { assistant: t.trim() || 'blank' }] as Step[]));
    await s.importer.importPaths([dir]);
    const sid = sessionIdOf('claude-code', id);
    const seg = await call(s, 'chapters_segment', { sessionId: sid });
    const res = await call(s, 'chapters_continue', { sessionId: sid, chapters: rangesOf(seg), handoffNote: 'n' });
    const events = storedEvents(s, sid);
    const parsed = (res.chapters as { path: string }[]).flatMap((c) => parseChapter(fs.readFileSync(c.path, 'utf8')));
    expect(parsed.map((p) => p.text)).toEqual(events.map((e) => e.text));
    expect(parsed.length).toBe(20);
    s.store.close();
  });
});

describe('chapters_continue', () => {
  it('refuses an over-budget table of contents with the measured numbers and writes nothing', async () => {
    const s = await openTemp();
    await s.importer.importPaths([transcriptFixtures()]);
    const id = 'ses_c65407920a8dc8a0';
    const seg = await call(s, 'chapters_segment', { sessionId: id });
    const before = archiveFootprint(s);
    const note = 'Keep going with the CLAUDE.md work and check every command twice. '.repeat(40);
    const refused = await call(s, 'chapters_continue', { sessionId: id, chapters: rangesOf(seg), handoffNote: note, budgetTokens: 300 });
    expect(refused.ok).toBe(false);
    const budget = refused.budget as { limit: number; used: number; unit: string };
    expect(budget.limit).toBe(300);
    expect(budget.unit).toBe('tokens');
    expect(budget.used).toBeGreaterThan(300);
    expect(budget.used).toBeGreaterThan(countTokens(note));
    expect(String(refused.reason)).toMatch(new RegExp(`would be ${budget.used} tokens .*over the 300-token budget .* by ${budget.used - 300}`));
    expect(archiveFootprint(s)).toEqual(before);
    // The same call within budget succeeds, and its budget is measured the same way.
    const ok = await call(s, 'chapters_continue', { sessionId: id, chapters: rangesOf(seg), handoffNote: note, preset: 'generous' });
    expect(ok).toMatchObject({ ok: true, presetUsed: { name: 'generous', budgetTokens: 8000 } });
    const used = ok.budget as { requested: number; used: number; remaining: number };
    expect(used.used).toBe(countTokens(String(ok.firstMessage)));
    expect(used.remaining).toBe(used.requested - used.used);
    expect(ok.warnings).toEqual([]);
    s.store.close();
  });

  it('warns about coverage gaps and cites an identical range instead of archiving it twice', async () => {
    const s = await openTemp();
    const dir = tempHome('gaps');
    const id = '33333333-aaaa-4bbb-8ccc-000000000001';
    writeClaudeSession(dir, id, FINISHED);
    await s.importer.importPaths([dir]);
    const sid = sessionIdOf('claude-code', id);
    const first = await call(s, 'chapters_continue', { sessionId: sid, chapters: [{ startSeq: 1, endSeq: 4, title: 'Parser', summary: 'where it lives' }], handoffNote: 'n' });
    expect(first.warnings).toEqual([]);
    const again = await call(s, 'chapters_continue', {
      sessionId: sid,
      chapters: [{ startSeq: 1, endSeq: 4, title: 'Parser again', summary: '' }, { startSeq: 7, endSeq: 8, title: 'Tail', summary: '' }],
      handoffNote: 'n',
    });
    expect((again.chapters as { new: boolean }[]).map((c) => c.new)).toEqual([false, true]);
    expect(again.warnings).toEqual([expect.stringContaining('archived before as "Parser"'), 'seq 5–6 (2 events) of this session are in no chapter, so the next session cannot open them.']);
    expect(Number(queryScalar(s.store.db, 'SELECT count(*) FROM chapters'))).toBe(2);
    s.store.close();
  });
});

describe('chapters_fork', () => {
  it('cites the existing archive and writes nothing', async () => {
    const s = await openTemp();
    await s.importer.importPaths([transcriptFixtures()]);
    const id = 'ses_c65407920a8dc8a0';
    const seg = await call(s, 'chapters_segment', { sessionId: id });
    const cont = await call(s, 'chapters_continue', { sessionId: id, chapters: rangesOf(seg), handoffNote: 'n' });
    const before = archiveFootprint(s);
    const fork = await call(s, 'chapters_fork', { sessionId: id, handoffNote: 'Try a shorter CLAUDE.md.' });
    expect(fork).toMatchObject({ ok: true, presetUsed: { name: 'standard' }, cites: [(cont.chapters as { id: string }[])[0]!.id] });
    expect(String(fork.childSessionId)).toMatch(/^rcs_/);
    expect((fork.budget as { used: number }).used).toBe(countTokens(String(fork.firstMessage)));
    expect(String(fork.firstMessage)).toContain('This plan belongs to the parent session');
    expect(archiveFootprint(s)).toEqual(before);
    expect(queryScalar(s.store.db, 'SELECT count(*) FROM child_sessions WHERE id = ?', [String(fork.childSessionId)])).toBe(0);
    s.store.close();
  });
});
