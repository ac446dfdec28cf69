import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventKind, ParsedEvent, ParseResult } from '../../../src/core/history/parsedSession';
import { parseCopilotEvents } from '../../../src/core/history/parsers/copilotEvents';
import { transcriptFixtures } from '../helpers/fixtures';

const DIR = path.join(transcriptFixtures(), 'copilot-cli');
const read = (name: string): string => fs.readFileSync(path.join(DIR, name), 'utf8');
const count = (events: ParsedEvent[], kind: EventKind): number => events.filter((e) => e.kind === kind).length;
const only = (r: ParseResult): ParsedEvent[] => {
  expect(r.sessions).toHaveLength(1);
  return r.sessions[0]?.events ?? [];
};
const jsonl = (records: unknown[]): string => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

/*
 * Expected counts, derived from the files themselves with a python3 one-off (json.loads per line,
 * not this parser):
 *   user       = lines of type user.message;
 *   assistant  = assistant.message lines whose data.content is not blank;
 *   tool_call  = distinct toolCallIds over assistant.message toolRequests and tool.execution_start;
 *   tool_result = tool.execution_complete lines; toolErrors = those with success false;
 *   system     = session.start + session.info lines (the only other types present).
 */
const EXPECTED: Record<string, Record<'user' | 'assistant' | 'tool_call' | 'tool_result' | 'toolErrors' | 'system', number>> = {
  '2acc594f-590b-4c79-9fcc-c1b1ea774875.jsonl': { user: 1, assistant: 1, tool_call: 0, tool_result: 0, toolErrors: 0, system: 3 },
  'c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl': { user: 1, assistant: 2, tool_call: 2, tool_result: 2, toolErrors: 0, system: 3 },
};

describe('parseCopilotEvents on the real Copilot CLI logs', () => {
  it('every fixture of the format has expected counts', () => {
    expect(fs.readdirSync(DIR).filter((f) => f.endsWith('.jsonl')).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [name, want] of Object.entries(EXPECTED)) {
    it(`${name}: counts, no problems, no unknown types, unique keys`, () => {
      const r = parseCopilotEvents(path.join(DIR, name), read(name));
      expect(r.problems).toEqual([]);
      expect(r.unknownTypes).toEqual({});
      const events = only(r);
      expect({
        user: count(events, 'user'), assistant: count(events, 'assistant'), tool_call: count(events, 'tool_call'),
        tool_result: count(events, 'tool_result'), toolErrors: events.filter((e) => e.kind === 'tool_result' && e.isError).length,
        system: count(events, 'system'),
      }).toEqual(want);
      expect(new Set(events.map((e) => e.key)).size).toBe(events.length);
      expect(r.sessions[0]).toMatchObject({ source: 'copilot-cli', externalId: name.replace('.jsonl', '') });
    });
  }

  it('is deterministic', () => {
    for (const name of Object.keys(EXPECTED)) expect(parseCopilotEvents(name, read(name))).toEqual(parseCopilotEvents(name, read(name)));
  });

  it('one tool_call per toolCallId, keyed where it first appears, linked to its result; runKey is the user message', () => {
    const r = parseCopilotEvents('events.jsonl', read('c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl'));
    const events = only(r);
    const user = '84df5642-41e6-4d07-ba8d-ecec9814dd7f';
    expect(events.map((e) => [e.key, e.kind, e.runKey])).toEqual([
      ['8f8efc1d-afc3-457e-8048-b5f20f198350', 'system', undefined],
      ['cadafc38-5a20-4be4-bf84-e920d6273ee7', 'system', undefined],
      ['2c022eed-7642-465c-83b0-ebe6f6c3b5d9', 'system', undefined],
      [user, 'user', user],
      ['e96e6678-df1f-47df-80c4-7089179c7de4', 'assistant', user],
      ['e96e6678-df1f-47df-80c4-7089179c7de4:call:tooluse_Xu2KFg2SSM23RdqR3XxkqA', 'tool_call', user],
      ['e96e6678-df1f-47df-80c4-7089179c7de4:call:tooluse_z-5b2c44SVKclvsXnlZIZQ', 'tool_call', user],
      ['bd16098a-5f74-4e2f-895c-aa686c289fb1', 'tool_result', user],
      ['7076e2a9-a4da-4749-b7c1-f789c140d840', 'tool_result', user],
      ['21700b55-8456-4d43-bad5-6946aae1cfdf', 'assistant', user],
    ]);
    expect(events[6]).toMatchObject({ toolName: 'view', callId: 'tooluse_z-5b2c44SVKclvsXnlZIZQ', toolInput: { path: '/one.ts' } });
    expect(events[8]).toMatchObject({ toolName: 'view', callId: 'tooluse_z-5b2c44SVKclvsXnlZIZQ', isError: false });
    expect(events[8]?.text).toContain('diff --git a/one.ts b/one.ts');
    expect(events[3]?.at).toBe(Date.parse('2025-11-07T01:12:19.208Z'));
    expect(r.sessions[0]).toMatchObject({ title: 'Explain the contents of /one.ts', startedAt: Date.parse('2025-11-07T01:12:11.309Z'), updatedAt: Date.parse('2025-11-07T01:12:34.789Z') });
  });

  it('keys already seen stay the same as the file grows (append-only)', () => {
    const full = read('c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl').split('\n');
    const whole = only(parseCopilotEvents('f.jsonl', full.join('\n')));
    for (let n = 1; n <= full.length; n++) {
      const prefix = only(parseCopilotEvents('f.jsonl', full.slice(0, n).join('\n')));
      for (const e of prefix) expect(whole.find((w) => w.key === e.key)?.kind).toBe(e.kind);
      expect(prefix.map((e) => e.key)).toEqual(whole.slice(0, prefix.length).map((e) => e.key));
    }
  });

  it('a garbage line is a problem with its line number; the rest still parses', () => {
    const lines = read('2acc594f-590b-4c79-9fcc-c1b1ea774875.jsonl').split('\n');
    lines.splice(3, 0, '{"type": "user.message", "data": {"content": "cut');
    const r = parseCopilotEvents('f.jsonl', lines.join('\n'));
    expect(r.problems).toEqual([expect.objectContaining({ file: 'f.jsonl', line: 4 })]);
    expect(count(only(r), 'user')).toBe(1);
    expect(count(only(r), 'assistant')).toBe(1);
  });
});

describe('parseCopilotEvents on variants', () => {
  // The Copilot Chat transcript shape: vscodeVersion and cwd on session.start, tool arguments as a JSON string.
  const transcript = [
    { type: 'session.start', id: 'e1', parentId: null, timestamp: '2026-01-10T10:00:00.000Z', data: { sessionId: 'chat-1', version: 1, producer: 'copilot-chat', copilotVersion: '0.40.0', vscodeVersion: '1.110.0', startTime: '2026-01-10T10:00:00.000Z', context: { cwd: '/home/me/proj' } } },
    { type: 'user.message', id: 'e2', parentId: 'e1', timestamp: '2026-01-10T10:00:01.000Z', data: { content: 'fix the build', attachments: [] } },
    { type: 'assistant.turn_start', id: 'e3', parentId: 'e2', timestamp: '2026-01-10T10:00:02.000Z', data: { turnId: '0' } },
    { type: 'assistant.usage', id: 'e4', parentId: 'e3', timestamp: '2026-01-10T10:00:02.500Z', data: { model: 'gpt-5' } },
    { type: 'assistant.message', id: 'e5', parentId: 'e4', timestamp: '2026-01-10T10:00:03.000Z', data: { messageId: 'm1', content: '', reasoningText: 'Need to run tsc.', toolRequests: [{ toolCallId: 't1', name: 'run_in_terminal', arguments: '{"command":"npx tsc"}', type: 'function' }] } },
    { type: 'tool.execution_start', id: 'e6', parentId: 'e5', timestamp: '2026-01-10T10:00:03.100Z', data: { toolCallId: 't1', toolName: 'run_in_terminal', arguments: { command: 'npx tsc' } } },
    { type: 'tool.execution_complete', id: 'e7', parentId: 'e6', timestamp: '2026-01-10T10:00:09.000Z', data: { toolCallId: 't1', success: false, error: { message: 'exit code 2', code: 'failure' } } },
    { type: 'session.brand_new_thing', id: 'e8', parentId: 'e7', timestamp: '2026-01-10T10:00:10.000Z', data: { x: 1 } },
    { type: 'assistant.turn_end', id: 'e9', parentId: 'e8', timestamp: '2026-01-10T10:00:11.000Z', data: { turnId: '0' } },
  ];

  it('reads the Copilot Chat transcript shape', () => {
    const r = parseCopilotEvents('/u/globalStorage/GitHub.copilot-chat/transcripts/chat-1.jsonl', jsonl(transcript));
    expect(r.problems).toEqual([]);
    expect(r.unknownTypes).toEqual({ 'session.brand_new_thing': 1 });
    const s = r.sessions[0];
    expect(s).toMatchObject({ source: 'copilot-transcript', externalId: 'chat-1', workspace: '/home/me/proj', model: 'gpt-5', title: 'fix the build' });
    expect(s?.events.map((e) => [e.key, e.kind, e.parentKey])).toEqual([
      ['e1', 'system', undefined],
      ['e2', 'user', 'e1'],
      ['e5:reasoning', 'reasoning', 'e2'],
      ['e5:call:t1', 'tool_call', 'e2'],
      ['e7', 'tool_result', 'e5:reasoning'],
      ['e8', 'unknown', 'e7'],
    ]);
    expect(s?.events[3]).toMatchObject({ toolName: 'run_in_terminal', callId: 't1', toolInput: { command: 'npx tsc' }, model: 'gpt-5' });
    expect(s?.events[4]).toMatchObject({ callId: 't1', toolName: 'run_in_terminal', isError: true, text: 'exit code 2' });
    expect(s?.events[5]?.text).toBe(JSON.stringify(transcript[7]));
  });

  it('names the session after the CLI folder when there is no session.start', () => {
    const r = parseCopilotEvents('/home/me/.copilot/session-state/abc-123/events.jsonl', jsonl(transcript.slice(1)));
    expect(r.sessions[0]).toMatchObject({ externalId: 'abc-123', source: 'copilot-cli', workspace: undefined });
  });

  it('a tool that ran without a request is still one tool call; a model change applies after itself', () => {
    const r = parseCopilotEvents('x.jsonl', jsonl([
      { type: 'session.model_change', id: 'a', timestamp: '2026-01-01T00:00:00Z', data: { previousModel: 'm1', newModel: 'm2' } },
      { type: 'tool.execution_start', id: 'b', timestamp: '2026-01-01T00:00:01Z', data: { toolCallId: 'z', toolName: 'grep', arguments: { q: 'x' } } },
      { type: 'tool.execution_complete', id: 'c', timestamp: '2026-01-01T00:00:02Z', data: { toolCallId: 'z', success: true, result: { content: 'short', detailedContent: 'long form' } } },
    ]));
    expect(only(r).map((e) => [e.key, e.kind, e.text, e.model])).toEqual([
      ['a', 'system', 'Model changed from m1 to m2', undefined],
      ['b:call:z', 'tool_call', 'grep {"q":"x"}', 'm2'],
      ['c', 'tool_result', 'short\nlong form', 'm2'],
    ]);
  });

  it('never throws on hostile lines, and a record without a type is kept', () => {
    const text = ['null', '[1]', '"s"', '{"id": 5, "data": "x"}', '{"type": "assistant.message", "data": {"toolRequests": [null, {"arguments": "{bad"}]}}', '{"type": "tool.execution_complete", "data": {"result": 7}}'].join('\n');
    expect(() => parseCopilotEvents('h.jsonl', text)).not.toThrow();
    const r = parseCopilotEvents('h.jsonl', text);
    expect(r.problems.map((p) => p.line)).toEqual([1, 2, 3]);
    expect(r.unknownTypes).toEqual({ '(no type)': 1 });
    expect(only(r).map((e) => e.kind)).toEqual(['unknown', 'tool_call', 'tool_result']);
    expect(parseCopilotEvents('empty.jsonl', '')).toEqual({ sessions: [], problems: [], unknownTypes: {} });
  });
});
