import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ParseResult } from '../../../src/core/history/parsedSession';
import { parseClaudeCode } from '../../../src/core/history/parsers/claudeCode';
import { transcriptFixtures } from '../helpers/fixtures';
import { countKinds, jsonl, type Counts } from './parserTestKit';

const DIR = path.join(transcriptFixtures(), 'claude-code');
const read = (rel: string): string => fs.readFileSync(path.join(DIR, rel), 'utf8');
const parse = (rel: string, text = read(rel)): ParseResult => parseClaudeCode(path.join(DIR, rel), text);

const A = '50a7220d-7250-46f3-b38e-b716ce25032e';
const B = 'b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093';
const SUB = { user: 1, assistant: 1, reasoning: 2, tool_call: 1, tool_result: 1 };

/**
 * Derived independently of the parser, by a python3 one-off over each file: per line, `type`
 * user → one tool_result per `tool_result` block (errors: `is_error` true), and the text
 * blocks together are one event, 'system' when `isMeta` or when nothing is left after
 * removing <system-reminder>/<local-command-*>/<bash-std*> blocks, else 'user'; type assistant
 * → text/thinking/tool_use blocks counted as assistant/reasoning/tool_call; `summary` lines
 * → summary; `progress` lines and a `queue-operation` without content → nothing.
 */
const FIXTURES: Record<string, { counts: Counts; parent?: string; externalId: string }> = {
  [`project-a/${A}.jsonl`]: { counts: { user: 1, assistant: 1, reasoning: 2, tool_call: 1, tool_result: 1 }, externalId: A },
  [`project-a/${A}/subagents/agent-a21e2f5.jsonl`]: { counts: SUB, parent: A, externalId: `${A}:agent-a21e2f5` },
  'project-a/553dd2b5-8a53-4fbf-9db2-240632522fe5.jsonl': { counts: { user: 1, assistant: 1 }, externalId: '553dd2b5-8a53-4fbf-9db2-240632522fe5' },
  'project-a/b02ed4d8-1f00-45cc-949f-3ea63b2dbde2.jsonl': { counts: { summary: 1, user: 3, assistant: 3 }, externalId: 'b02ed4d8-1f00-45cc-949f-3ea63b2dbde2' },
  [`project-a/${B}.jsonl`]: { counts: { user: 1, assistant: 1, reasoning: 2, tool_call: 4, tool_result: 4 }, externalId: B },
  [`project-a/${B}/subagents/agent-a775a67.jsonl`]: { counts: SUB, parent: B, externalId: `${B}:agent-a775a67` },
  [`project-a/${B}/subagents/agent-aa9d784.jsonl`]: { counts: SUB, parent: B, externalId: `${B}:agent-aa9d784` },
  [`project-a/${B}/subagents/agent-ac47f8c.jsonl`]: { counts: SUB, parent: B, externalId: `${B}:agent-ac47f8c` },
  [`project-a/${B}/subagents/agent-ae52dab.jsonl`]: { counts: SUB, parent: B, externalId: `${B}:agent-ae52dab` },
  'project-a/c8bcb3a7-8728-4d76-9aae-1cbaf2350114.jsonl': { counts: { user: 2, assistant: 2 }, externalId: 'c8bcb3a7-8728-4d76-9aae-1cbaf2350114' },
  // 1.0.98 `/init`: the <command-name> line is the user's request, its isMeta expansion is system; one Write failed.
  'project-b/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl': {
    counts: { user: 1, system: 1, assistant: 3, tool_call: 12, tool_result: 12, errors: 1 },
    externalId: '1af7fc5e-8455-4414-9ccd-011d40f70b2a',
  },
};

describe('Claude Code parser on the real fixtures', () => {
  it('the table covers every Claude Code fixture file', () => {
    const files = fs.readdirSync(DIR, { recursive: true }).map(String).filter((f) => f.endsWith('.jsonl'));
    expect(files.map((f) => f.split(path.sep).join('/')).sort()).toEqual(Object.keys(FIXTURES).sort());
  });

  it.each(Object.entries(FIXTURES))('%s', (rel, want) => {
    const r = parse(rel);
    expect(r.problems).toEqual([]);
    expect(r.unknownTypes).toEqual({});
    expect(r.sessions).toHaveLength(1);
    const s = r.sessions[0]!;
    expect(countKinds(s.events)).toEqual(want.counts);
    expect(s).toMatchObject({ source: 'claude-code', externalId: want.externalId, parentExternalId: want.parent });
    // Every result answers a call recorded in the same file.
    const calls = new Set(s.events.filter((e) => e.kind === 'tool_call').map((e) => e.callId));
    for (const e of s.events.filter((e) => e.kind === 'tool_result')) expect(calls.has(e.callId)).toBe(true);
    expect(new Set(s.events.map((e) => e.key)).size).toBe(s.events.length);
  });

  it('reads session fields: workspace, model, times, title from the summary or the first real prompt', () => {
    const resumed = parse('project-a/b02ed4d8-1f00-45cc-949f-3ea63b2dbde2.jsonl').sessions[0]!;
    // The file also holds copies of c8bcb3a7's lines (their own sessionId), and its timestamps run backwards once.
    expect(resumed).toMatchObject({
      title: 'VS Code Copilot Chat: Initial Project Setup',
      workspace: '/Users/roblou/code/vscode-copilot-chat',
      model: 'claude-sonnet-4-20250514',
      startedAt: Date.parse('2025-08-29T21:41:55.480Z'),
      updatedAt: Date.parse('2025-08-29T21:42:28.431Z'),
    });
    expect(parse('project-a/553dd2b5-8a53-4fbf-9db2-240632522fe5.jsonl').sessions[0]!.title).toBe('hello session 2');
    expect(parse('project-b/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl').sessions[0]!.title).toBe('/init');
  });

  it('keeps the text whole, renders tool input, and links results to calls', () => {
    const s = parse('project-b/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl').sessions[0]!;
    const ls = s.events.find((e) => e.kind === 'tool_call' && e.text === 'ls -la')!;
    expect(ls).toMatchObject({ toolName: 'Bash', callId: 'toolu_012Gbtu9wRFgVWjdDUHE3djw', toolInput: { command: 'ls -la' } });
    const out = s.events.find((e) => e.kind === 'tool_result' && e.callId === ls.callId)!;
    expect(out.text).toContain('drwxr-xr-x 39 kaito staff 1248');
    const failed = s.events.find((e) => e.isError)!;
    expect(failed.text).toBe("Error: Claude requested permissions to write to /path/to/Demo/CLAUDE.md, but you haven't granted it yet.");
    const write = s.events.find((e) => e.toolName === 'Write')!;
    expect(write.text).toContain('## Architecture');
    // One run: the /init request and everything it caused.
    expect(new Set(s.events.map((e) => e.runKey))).toEqual(new Set(['e2ab9812-8be7-4e9e-8194-d9b7b9d6da14']));
  });

  it('keeps the branches of the parentUuid tree (parallel Task calls) and skips progress records without breaking it', () => {
    const s = parse(`project-a/${B}.jsonl`).sessions[0]!;
    // The first Task call's line has two children: the next Task call and its own result.
    const children = s.events.filter((e) => e.parentKey === 'c0619abc-8c07-4ea6-975c-2c705890c71a');
    expect(children.map((e) => e.kind).sort()).toEqual(['tool_call', 'tool_result']);
    const sub = parse(`project-a/${A}/subagents/agent-a21e2f5.jsonl`).sessions[0]!;
    // f05f224f's parent is a progress record whose parent is another progress record whose parent is 135af2f5.
    expect(sub.events.find((e) => e.key.startsWith('f05f224f'))!.parentKey).toBe('135af2f5-2f07-4890-a4bc-791cbf32225e');
    const keys = new Set(sub.events.map((e) => e.key));
    for (const e of sub.events) if (e.parentKey) expect(keys.has(e.parentKey)).toBe(true);
  });

  it('gives stable keys: parsing twice agrees, and every prefix of a file yields a prefix of the events', () => {
    for (const rel of Object.keys(FIXTURES)) {
      const text = read(rel);
      const whole = parse(rel, text);
      expect(parse(rel, text)).toEqual(whole);
      const all = whole.sessions.flatMap((s) => s.events);
      const lines = text.split('\n');
      for (let n = 0; n <= lines.length; n++) {
        const part = parse(rel, lines.slice(0, n).join('\n')).sessions.flatMap((s) => s.events);
        expect(part).toEqual(all.slice(0, part.length));
      }
    }
  });
});

describe('Claude Code parser on damaged and unusual input', () => {
  const user = (uuid: string, parentUuid: string | null, content: unknown, extra: object = {}) => ({
    type: 'user',
    uuid,
    parentUuid,
    sessionId: 's1',
    cwd: '/w',
    timestamp: '2025-01-01T00:00:00.000Z',
    message: { role: 'user', content },
    ...extra,
  });
  const assistant = (uuid: string, parentUuid: string, content: unknown[], id = 'msg_' + uuid) => ({
    type: 'assistant',
    uuid,
    parentUuid,
    sessionId: 's1',
    timestamp: '2025-01-01T00:00:01.000Z',
    message: { id, role: 'assistant', model: 'claude-x', content },
  });
  const text = (t: string) => ({ type: 'text', text: t });

  it('reports a garbage line with its line number and parses the rest', () => {
    const lines = read(`project-a/${A}.jsonl`).split('\n');
    lines.splice(3, 0, '{"type":"user", this is not json');
    const r = parse(`project-a/${A}.jsonl`, lines.join('\n') + '\n[1,2]\n');
    expect(r.problems).toEqual([
      expect.objectContaining({ line: 4, reason: expect.stringContaining('not JSON') }),
      expect.objectContaining({ line: lines.length + 1, reason: 'not a JSON object' }),
    ]);
    expect(r.problems[0]!.file).toContain(A);
    expect(r.sessions[0]!.events).toEqual(parse(`project-a/${A}.jsonl`).sessions[0]!.events);
  });

  it('keeps an unknown record type and an unknown content part whole, as unknown events, and counts them', () => {
    const big = { type: 'attachment', uuid: 'u2', parentUuid: 'u1', sessionId: 's1', payload: 'x'.repeat(5000) };
    const r = parseClaudeCode('/p/s1.jsonl', jsonl(user('u1', null, 'hi'), big, assistant('a1', 'u2', [text('ok'), { type: 'hologram', beam: 1 }])));
    expect(r.unknownTypes).toEqual({ attachment: 1, 'assistant/hologram': 1 });
    const events = r.sessions[0]!.events;
    expect(events.map((e) => [e.key, e.kind, e.parentKey])).toEqual([
      ['u1', 'user', undefined],
      ['u2', 'unknown', 'u1'],
      ['a1:0', 'assistant', 'u2'],
      ['a1', 'unknown', 'a1:0'],
    ]);
    expect(events[1]!.text).toBe(JSON.stringify(big));
    expect(events[3]!).toMatchObject({ text: '{"type":"hologram","beam":1}', rawType: 'assistant/hologram' });
  });

  it('keeps an edited prompt as a branch and runs follow the tree, including a retried answer', () => {
    const r = parseClaudeCode(
      '/p/s1.jsonl',
      jsonl(
        user('u1', null, 'first'),
        assistant('a1', 'u1', [text('one')]),
        user('u2', 'a1', 'second'),
        assistant('a2', 'u2', [text('two')]),
        user('u2b', 'a1', 'second, edited'),
        assistant('a2b', 'u2b', [text('two again')]),
        assistant('a1b', 'u1', [text('one, retried')]),
      ),
    );
    const byKey = new Map(r.sessions[0]!.events.map((e) => [e.key, e]));
    expect(byKey.size).toBe(7);
    expect([byKey.get('u2')!.parentKey, byKey.get('u2b')!.parentKey]).toEqual(['a1', 'a1']);
    expect(byKey.get('a2')!.runKey).toBe('u2');
    expect(byKey.get('a2b')!.runKey).toBe('u2b');
    expect(byKey.get('a1b')!.runKey).toBe('u1');
  });

  it('splits a message whose blocks share a line, chaining them so the line uuid is the last block', () => {
    const r = parseClaudeCode(
      '/p/s1.jsonl',
      jsonl(
        user('u1', null, [text('<system-reminder>ctx</system-reminder>'), text('do it')]),
        assistant('a1', 'u1', [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, text('ok'), { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/x' } }]),
        user('r1', 'a1', [{ type: 'tool_result', tool_use_id: 't1', content: [text('line 1'), text('line 2')] }]),
      ),
    );
    const events = r.sessions[0]!.events;
    expect(events.map((e) => [e.key, e.kind, e.parentKey, e.runKey])).toEqual([
      ['u1', 'user', undefined, 'u1'],
      ['a1:0', 'reasoning', 'u1', 'u1'],
      ['a1:1', 'assistant', 'a1:0', 'u1'],
      ['a1', 'tool_call', 'a1:1', 'u1'],
      ['r1', 'tool_result', 'a1', 'u1'],
    ]);
    expect(events[0]!.text).toBe('<system-reminder>ctx</system-reminder>\n\ndo it');
    expect(events[3]).toMatchObject({ toolName: 'Read', callId: 't1', toolInput: { file_path: '/x' }, text: '{"file_path":"/x"}', model: 'claude-x' });
    expect(events[4]).toMatchObject({ callId: 't1', text: 'line 1\nline 2', isError: false });
  });

  it('tells meta messages from prompts: only a real prompt starts a run', () => {
    const r = parseClaudeCode(
      '/p/s1.jsonl',
      jsonl(
        user('m1', null, '<system-reminder>only context</system-reminder>'),
        user('c1', 'm1', '<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>'),
        user('o1', 'c1', '<local-command-stdout>Set model to opus</local-command-stdout>'),
        user('x1', 'o1', 'Caveat: generated while running local commands', { isMeta: true }),
        user('p1', 'x1', 'fix the bug'),
        user('i1', 'p1', [text('[Request interrupted by user for tool use]')]),
        user('k1', 'i1', 'This session is being continued from a previous conversation…', { isCompactSummary: true }),
      ),
    );
    const events = r.sessions[0]!.events;
    expect(events.map((e) => [e.key, e.kind, e.runKey])).toEqual([
      ['m1', 'system', undefined],
      ['c1', 'user', 'c1'],
      ['o1', 'system', 'c1'],
      ['x1', 'system', 'c1'],
      ['p1', 'user', 'p1'],
      ['i1', 'system', 'p1'],
      ['k1', 'summary', 'p1'],
    ]);
    expect(r.sessions[0]!.title).toBe('/model');
  });

  it('prefers the fuller shell output from toolUseResult and keeps stderr', () => {
    const r = parseClaudeCode(
      '/p/s1.jsonl',
      jsonl(
        user('u1', null, 'run'),
        assistant('a1', 'u1', [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'make' } }]),
        user('r1', 'a1', [{ type: 'tool_result', tool_use_id: 't1', content: 'out', is_error: true }], { toolUseResult: { stdout: 'out', stderr: 'boom', interrupted: false } }),
      ),
    );
    expect(r.sessions[0]!.events.at(-1)).toMatchObject({ kind: 'tool_result', text: 'out\nboom', isError: true });
  });

  it('makes 1.0.x inline sidechains their own sessions that name the main one', () => {
    const side = { isSidechain: true };
    const r = parseClaudeCode(
      '/p/11111111-2222-3333-4444-555555555555.jsonl',
      jsonl(
        user('u1', null, 'delegate it'),
        assistant('a1', 'u1', [{ type: 'tool_use', id: 't1', name: 'Task', input: { prompt: 'look around' } }]),
        { ...user('s1', null, 'look around'), ...side },
        { ...assistant('s2', 's1', [text('found it')]), ...side },
        user('r1', 'a1', [{ type: 'tool_result', tool_use_id: 't1', content: 'found it' }]),
      ),
    );
    const [main, sub] = r.sessions;
    const id = '11111111-2222-3333-4444-555555555555';
    expect(main).toMatchObject({ externalId: id, title: 'delegate it' });
    expect(countKinds(main!.events)).toEqual({ user: 1, tool_call: 1, tool_result: 1 });
    expect(sub).toMatchObject({ externalId: `${id}:sidechain-s1`, parentExternalId: id, title: 'look around' });
    expect(sub!.events.map((e) => [e.key, e.kind, e.runKey])).toEqual([
      ['s1', 'user', 's1'],
      ['s2', 'assistant', 's1'],
    ]);
  });

  it('names a 2.0 sidechain file by the session in its lines, and a custom title wins over summaries', () => {
    const line = { ...user('u1', null, 'sub prompt'), sessionId: 'parent-session', isSidechain: true, agentId: 'abc' };
    const r = parseClaudeCode('/p/agent-abc.jsonl', jsonl(line));
    expect(r.sessions[0]).toMatchObject({ externalId: 'parent-session:agent-abc', parentExternalId: 'parent-session' });

    const titled = parseClaudeCode(
      '/p/s1.jsonl',
      jsonl({ type: 'summary', summary: 'Old', leafUuid: 'a1' }, user('u1', null, 'hello'), { type: 'summary', summary: 'Newer', leafUuid: 'a1' }),
    );
    expect(titled.sessions[0]!.title).toBe('Newer');
    expect(titled.sessions[0]!.externalId).toBe('s1');
    const renamed = parseClaudeCode('/p/s1.jsonl', jsonl(user('u1', null, 'hello'), { type: 'custom-title', customTitle: 'Mine', sessionId: 's1' }, { type: 'summary', summary: 'Auto', leafUuid: 'u1' }));
    expect(renamed.sessions[0]!.title).toBe('Mine');
  });

  it('returns nothing, and throws nothing, for empty or bookkeeping-only files', () => {
    expect(parseClaudeCode('/p/x.jsonl', '')).toEqual({ sessions: [], problems: [], unknownTypes: {} });
    const snap = parseClaudeCode('/p/x.jsonl', jsonl({ type: 'file-history-snapshot', messageId: 'm', snapshot: {} }, { type: 'queue-operation', operation: 'dequeue' }));
    expect(snap.sessions).toEqual([]);
    expect(() => parseClaudeCode('/p/x.jsonl', 'null\n"str"\n{"type":"user","message":null}\n{"type":"assistant","message":{"content":[null]}}\n')).not.toThrow();
  });
});
