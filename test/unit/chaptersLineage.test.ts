import { describe, expect, it } from 'vitest';
import type { ContinueResult } from '../../src/core/chapters/archive';
import { sessionIdOf } from '../../src/core/history/importer';
import { isRefusal, type Refusal } from '../../src/core/refusal';
import type { Services } from '../../src/core/services';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import { writeClaudeSession, type Step } from './helpers/claudeTranscript';
import { openTemp, tempHome } from './helpers/tempStore';

const WORK: Step[] = [
  { user: 'Set up the parser' },
  { tool: 'Bash', id: 'toolu_1', input: { command: 'ls' } },
  { result: 'src\ntest', id: 'toolu_1' },
  { assistant: 'The parser lives in src.' },
  { user: 'Plan the tests' },
  { tool: 'TodoWrite', id: 'toolu_2', input: { todos: [{ content: 'Write parser tests', status: 'in_progress', activeForm: 'Writing' }, { content: 'Run them', status: 'pending', activeForm: 'Running' }] } },
  { result: 'Todos have been modified successfully.', id: 'toolu_2' },
  { assistant: 'Planned.' },
];

let counter = 0;
/** Writes and imports a Claude Code session; its first message may be a child's first message. */
async function session(s: Services, steps: Step[], startMs: number): Promise<string> {
  const external = `55555555-aaaa-4bbb-8ccc-${String(++counter).padStart(12, '0')}`;
  await s.importer.importPaths([writeClaudeSession(tempHome('lineage'), external, steps, '/work/demo', startMs)]);
  return sessionIdOf('claude-code', external);
}

function ok<T>(r: T): Exclude<T, Refusal> {
  if (isRefusal(r)) throw new Error(r.reason);
  return r as Exclude<T, Refusal>;
}

describe('continue and fork across a lineage', () => {
  it('links the chat that opens with the marker, and the next table of contents carries the whole ancestry chronologically', async () => {
    const s = await openTemp();
    const day = Date.UTC(2025, 9, 1);
    const parent = await session(s, WORK, day);
    const first = ok(await s.chapters.door({ sessionId: parent, intent: 'continue', client: 'test' }));
    expect(first.firstMessage.split('\n')[0]).toBe(`[recollect child ${first.marker}: continue of ${parent}]`);
    expect(first.firstMessage).toContain('This plan is yours');

    // The new chat appears with the table of contents as its first message.
    const child = await session(s, [{ user: first.firstMessage }, { assistant: 'Understood.' }, { user: 'Write the tests' }, { tool: 'Write', id: 'toolu_3', input: { file_path: 'a.test.ts' } }, { result: 'written', id: 'toolu_3' }, { assistant: 'Done.' }], day + 86_400_000);
    expect(queryScalar(s.store.db, 'SELECT linked_session_id FROM child_sessions WHERE id = ?', [first.childSessionId])).toBe(child);
    expect(s.chapters.lineage(child)).toEqual({ sessions: [parent, child], openedAs: { id: first.childSessionId, intent: 'continue', parentSessionId: parent, carried: first.chapters.length } });

    const seg = ok(s.chapters.segment(child));
    expect(seg.modeActive).toBe(true);
    // The table of contents it opened with is carried, not archived again.
    expect(seg.ranges[0]!.startSeq).toBe(2);

    const second = ok(await s.chapters.door({ sessionId: child, intent: 'continue', client: 'test' }));
    const grandchild = await session(s, [{ user: second.firstMessage }, { assistant: 'Carrying on.' }], day + 2 * 86_400_000);
    const third = ok(await s.chapters.door({ sessionId: grandchild, intent: 'continue', client: 'test' }));
    const ids = [...third.firstMessage.matchAll(/`(ch_[0-9a-z]+)`/g)].map((m) => m[1]);
    const bySession = (sid: string) => queryRows(s.store.db, 'SELECT id FROM chapters WHERE session_id = ? ORDER BY start_seq', [sid]).map((r) => String(r.id));
    expect(ids).toEqual([...bySession(parent), ...bySession(child), ...bySession(grandchild)]);
    expect(third.firstMessage).toContain(`Lineage: ${parent} → ${child} → ${grandchild}.`);
    expect(third.toc.chapters).toBe(ids.length);
    s.store.close();
  });

  it("a model's fork writes nothing, and the branch is recorded only when its chat appears", async () => {
    const s = await openTemp();
    const parent = await session(s, WORK, Date.UTC(2025, 9, 2));
    const cont = ok(await s.chapters.door({ sessionId: parent, intent: 'continue', client: 'test' }));
    const fork = (await invokeTool(findTool('chapters_fork')!, { sessionId: parent, handoffNote: 'Try property tests instead.' }, s, { client: 'claude-code' })) as Record<string, unknown>;
    const children = () => Number(queryScalar(s.store.db, 'SELECT count(*) FROM child_sessions'));
    expect(children()).toBe(1);
    // Recollect's own calls are not history: the fork's answer (marker included) is in no event, so it links nothing.
    expect(Number(queryScalar(s.store.db, 'SELECT count(*) FROM events WHERE instr(text, ?) > 0', [String(fork.marker)]))).toBe(0);
    expect(children()).toBe(1);

    const branch = await session(s, [{ user: String(fork.firstMessage) }, { assistant: 'Branching.' }], Date.UTC(2025, 9, 3));
    expect(children()).toBe(2);
    const row = queryRows(s.store.db, 'SELECT intent, parent_session_id, linked_session_id FROM child_sessions WHERE marker = ?', [String(fork.marker)])[0]!;
    expect(row).toEqual({ intent: 'fork', parent_session_id: parent, linked_session_id: branch });
    const carried = queryRows(s.store.db, 'SELECT chapter_id FROM child_chapters cc JOIN child_sessions c ON c.id = cc.child_id WHERE c.marker = ? ORDER BY ord', [String(fork.marker)]).map((r) => r.chapter_id);
    expect(carried).toEqual(cont.chapters.map((c) => c.id));
    // Pasting the same first message into another chat later does not move the link.
    await session(s, [{ user: String(fork.firstMessage) }, { assistant: 'Again.' }], Date.UTC(2025, 9, 4));
    expect(queryScalar(s.store.db, 'SELECT linked_session_id FROM child_sessions WHERE marker = ?', [String(fork.marker)])).toBe(branch);
    s.store.close();
  });
});

describe('the deterministic door', () => {
  it('archives up to the row a person clicked, and a fork from there archives that span first', async () => {
    const s = await openTemp();
    const sid = await session(s, WORK, Date.UTC(2025, 9, 5));
    const forked: ContinueResult = ok(await s.chapters.door({ sessionId: sid, intent: 'fork', uptoSeq: 4, client: 'test' }));
    expect(forked.intent).toBe('fork');
    expect(forked.chapters.map((c) => [c.startSeq, c.endSeq])).toEqual([[1, 4]]);
    expect(forked.firstMessage).toContain('archived up to seq 4');
    expect(forked.firstMessage).not.toContain('Plan the tests');
    // Continuing from the last row cites the first chapter and archives only what follows it.
    const cont = ok(await s.chapters.door({ sessionId: sid, intent: 'continue', client: 'test' }));
    expect(cont.chapters.map((c) => [c.startSeq, c.endSeq, c.new])).toEqual([[5, 8, true]]);
    expect(cont.toc.chapters).toBe(2);
    s.store.close();
  });

  it('refuses a row above the ceiling with the numbers', async () => {
    const s = await openTemp();
    const sid = await session(s, [...WORK, { user: 'And now?' }], Date.UTC(2025, 9, 6));
    const r = await s.chapters.door({ sessionId: sid, intent: 'continue', uptoSeq: 9, client: 'test' });
    expect(r).toMatchObject({ ok: false, budget: { limit: 8, used: 9, unit: 'items' } });
    expect(Number(queryScalar(s.store.db, 'SELECT count(*) FROM chapters'))).toBe(0);
    // Without a row, the door stops at the ceiling and says what it left out.
    const cont = ok(await s.chapters.door({ sessionId: sid, intent: 'continue', client: 'test' }));
    expect(Math.max(...cont.chapters.map((c) => c.endSeq))).toBe(8);
    expect(cont.firstMessage).toContain('Not archived: seq 9 onwards, a turn still in progress');
    expect(cont.warnings).toContainEqual(expect.stringContaining('seq 9 onwards is an unfinished turn'));
    s.store.close();
  });
});
