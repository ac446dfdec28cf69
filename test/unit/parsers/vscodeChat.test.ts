import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventKind, ParsedEvent, ParseResult } from '../../../src/core/history/parsedSession';
import { parseVscodeChat } from '../../../src/core/history/parsers/vscodeChat';
import { transcriptFixtures } from '../helpers/fixtures';

const DIR = path.join(transcriptFixtures(), 'copilot-export');
const read = (name: string): string => fs.readFileSync(path.join(DIR, name), 'utf8');
const count = (events: ParsedEvent[], kind: EventKind): number => events.filter((e) => e.kind === kind).length;
const only = (r: ParseResult): ParsedEvent[] => {
  expect(r.sessions).toHaveLength(1);
  return r.sessions[0]?.events ?? [];
};

/*
 * Expected counts, derived from the files themselves with a python3 one-off (json.load, not this
 * parser), per request in `requests[]`:
 *   user       = number of requests;
 *   assistant  = maximal runs of consecutive text parts in `response[]` (a part with no `kind` and
 *                a string `value`, or kind markdownContent / inlineReference), where parts that
 *                yield nothing (a prepareToolInvocation followed by a toolInvocationSerialized of
 *                the same toolId, empty thinking, an mcpServersStarting with no ids, undoStop,
 *                codeblockUri) do not break a run;
 *   reasoning  = the same runs for non-empty `thinking` parts;
 *   tool_call  = parts of kind toolInvocationSerialized; tool_result = the same (all are complete);
 *   toolErrors = those whose resultDetails.isError is true;
 *   system     = requests with result.errorDetails, isCanceled, or modelState.value 2/3.
 */
const EXPECTED: Record<string, Record<'user' | 'assistant' | 'reasoning' | 'tool_call' | 'tool_result' | 'toolErrors' | 'system', number>> = {
  'dealenx-secretary_canceled_chat.json': { user: 2, assistant: 1, reasoning: 1, tool_call: 0, tool_result: 0, toolErrors: 0, system: 1 },
  'dealenx_chat_error_mcp.json': { user: 1, assistant: 2, reasoning: 0, tool_call: 1, tool_result: 1, toolErrors: 1, system: 0 },
  'dealenx_chat_succes_mcp.json': { user: 1, assistant: 4, reasoning: 0, tool_call: 3, tool_result: 3, toolErrors: 0, system: 0 },
  'dealenx_in_progress_chat.json': { user: 1, assistant: 2, reasoning: 0, tool_call: 2, tool_result: 2, toolErrors: 0, system: 0 },
  'dealenx_parse-export-chat.json': { user: 2, assistant: 2, reasoning: 0, tool_call: 0, tool_result: 0, toolErrors: 0, system: 0 },
  'dealenx_pending_empty.json': { user: 0, assistant: 0, reasoning: 0, tool_call: 0, tool_result: 0, toolErrors: 0, system: 0 },
};

describe('parseVscodeChat on the real exports', () => {
  it('every fixture of the format has expected counts', () => {
    expect(fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [name, want] of Object.entries(EXPECTED)) {
    it(`${name}: counts, no problems, no unknown kinds, unique keys`, () => {
      const r = parseVscodeChat(path.join(DIR, name), read(name));
      expect(r.problems).toEqual([]);
      expect(r.unknownTypes).toEqual({});
      const events = only(r);
      const got = {
        user: count(events, 'user'), assistant: count(events, 'assistant'), reasoning: count(events, 'reasoning'),
        tool_call: count(events, 'tool_call'), tool_result: count(events, 'tool_result'),
        toolErrors: events.filter((e) => e.kind === 'tool_result' && e.isError).length, system: count(events, 'system'),
      };
      expect(got).toEqual(want);
      expect(new Set(events.map((e) => e.key)).size).toBe(events.length);
      expect(events.every((e) => e.runKey !== undefined)).toBe(true);
    });
  }

  it('is deterministic: the same file gives the same keys and events twice', () => {
    for (const name of Object.keys(EXPECTED)) {
      expect(parseVscodeChat(name, read(name))).toEqual(parseVscodeChat(name, read(name)));
    }
  });

  it('keys, run keys, title, model and times come from the requests', () => {
    const s = parseVscodeChat('/x/dealenx_parse-export-chat.json', read('dealenx_parse-export-chat.json')).sessions[0];
    expect(s?.source).toBe('vscode-chat');
    expect(s?.externalId).toBe('dealenx_parse-export-chat#request_b954e50d-60d0-4510-aa0e-9ddb6c264ceb');
    expect(s?.title).toBe('hi');
    expect(s?.model).toBe('copilot/gemini-2.5-pro');
    expect(s?.workspace).toBeUndefined();
    expect([s?.startedAt, s?.updatedAt]).toEqual([1759418211240, 1759418255799]);
    expect(s?.events.map((e) => [e.key, e.kind, e.runKey, e.text])).toEqual([
      ['request_b954e50d-60d0-4510-aa0e-9ddb6c264ceb:user', 'user', 'request_b954e50d-60d0-4510-aa0e-9ddb6c264ceb', 'hi'],
      ['request_b954e50d-60d0-4510-aa0e-9ddb6c264ceb:resp:0', 'assistant', 'request_b954e50d-60d0-4510-aa0e-9ddb6c264ceb', 'Hello! How can I help you today?'],
      ['request_677e0e3a-20dc-4d32-946a-b3f6225e3105:user', 'user', 'request_677e0e3a-20dc-4d32-946a-b3f6225e3105', 'hello'],
      ['request_677e0e3a-20dc-4d32-946a-b3f6225e3105:resp:0', 'assistant', 'request_677e0e3a-20dc-4d32-946a-b3f6225e3105', 'Hello! How can I help you?'],
    ]);
  });

  it('an MCP tool that failed is a tool_call with its input and an error tool_result; prepareToolInvocation is folded', () => {
    const events = only(parseVscodeChat('chat_error_mcp.json', read('dealenx_chat_error_mcp.json')));
    const call = events.find((e) => e.kind === 'tool_call');
    const result = events.find((e) => e.kind === 'tool_result');
    expect(call).toMatchObject({
      key: 'request_465c6a97-e584-42eb-ac5c-18340882bbbc:resp:2', toolName: 'mcp_micmicai-mcp_update_entry_fields',
      callId: '2deb4aeb-0530-49f4-97b0-c0bdb214a46d', toolInput: { entry_id: 'invalid_id', fields: {} }, model: 'copilot/claude-sonnet-4',
    });
    expect(result).toMatchObject({ key: `${call?.key}:result`, callId: call?.callId, isError: true });
    expect(result?.text).toContain('400: GraphQL');
    expect(events.some((e) => e.rawType === 'prepareToolInvocation')).toBe(false);
  });

  it('a canceled request stays visible, and thinking becomes one reasoning event', () => {
    const r = parseVscodeChat('canceled.json', read('dealenx-secretary_canceled_chat.json'));
    const events = only(r);
    expect(events.find((e) => e.kind === 'system')).toMatchObject({ key: 'request_70c4f858-06b8-4d4e-aeb2-41bd1d7fc442:error', text: 'Canceled', at: 1768500958094 });
    expect(events.find((e) => e.kind === 'reasoning')?.text).toMatch(/^The user has written/);
    expect(r.sessions[0]?.title).toBe('Проанализиуй фразу длинную');
  });

  it('a URL result lists the fetched URLs', () => {
    const events = only(parseVscodeChat('p.json', read('dealenx_in_progress_chat.json')));
    const results = events.filter((e) => e.kind === 'tool_result');
    expect(results[1]?.text.split('\n')).toHaveLength(3);
    expect(results[1]?.text).toContain('https://www.wwf.ru/species/snow-leopard/');
  });

  it('the empty export is a session with zero events', () => {
    const r = parseVscodeChat('/exports/dealenx_pending_empty.json', read('dealenx_pending_empty.json'));
    expect(r.sessions).toEqual([{ source: 'vscode-chat', externalId: 'dealenx_pending_empty', title: undefined, model: undefined, startedAt: undefined, updatedAt: undefined, events: [] }]);
  });

  it('parsing does not depend on the folder (chatSessions or emptyWindowChatSessions)', () => {
    const text = read('dealenx_chat_succes_mcp.json');
    const a = parseVscodeChat('/u/workspaceStorage/abc/chatSessions/s1.json', text);
    const b = parseVscodeChat('C:\\u\\globalStorage\\emptyWindowChatSessions\\s1.json', text);
    expect(b).toEqual(a);
  });
});

describe('parseVscodeChat on a .jsonl mutation log', () => {
  const exportData = JSON.parse(read('dealenx_parse-export-chat.json')) as { requests: Record<string, unknown>[] };
  const [first, second] = exportData.requests;
  const initial = { version: 3, sessionId: 'sess-1', creationDate: 1759418200000, requests: [first] };
  const added = { ...second, requestId: 'request_new', message: { text: 'third question', parts: [] }, response: [], modelId: 'copilot/other' };
  const log = [
    { kind: 0, v: initial },
    { kind: 2, k: ['requests'], v: [added] },
    { kind: 1, k: ['requests', 1, 'response'], v: [{ value: 'draft answer' }] },
    { kind: 2, k: ['requests', 1, 'response'], v: [{ value: 'third ' }, { value: 'answer' }], i: 0 },
    { kind: 3, k: ['requests', 1, 'modelId'] },
    { kind: 1, k: ['customTitle'], v: 'Renamed chat' },
  ].map((e) => JSON.stringify(e));
  // The state those six entries describe, written out by hand.
  const expectedState = {
    ...initial, customTitle: 'Renamed chat',
    requests: [first, { ...added, modelId: undefined, response: [{ value: 'third ' }, { value: 'answer' }] }],
  };

  it('replays to the same session as the final snapshot', () => {
    const r = parseVscodeChat('/ws/chatSessions/sess-1.jsonl', log.join('\n') + '\n');
    expect(r.problems).toEqual([]);
    expect(r).toEqual(parseVscodeChat('/ws/chatSessions/sess-1.json', JSON.stringify(expectedState)));
    const s = r.sessions[0];
    expect(s).toMatchObject({ externalId: 'sess-1', title: 'Renamed chat', model: 'copilot/gemini-2.5-pro', startedAt: 1759418200000 });
    expect(s?.events.map((e) => [e.key, e.kind, e.text])).toEqual([
      ['request_b954e50d-60d0-4510-aa0e-9ddb6c264ceb:user', 'user', 'hi'],
      ['request_b954e50d-60d0-4510-aa0e-9ddb6c264ceb:resp:0', 'assistant', 'Hello! How can I help you today?'],
      ['request_new:user', 'user', 'third question'],
      ['request_new:resp:0', 'assistant', 'third answer'],
    ]);
  });

  it('a garbage line is a problem with its line number, and later lines still replay', () => {
    const lines = [...log.slice(0, 2), '{"kind": 1, "k": [ garbage', ...log.slice(2)];
    const r = parseVscodeChat('s.jsonl', lines.join('\n'));
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ file: 's.jsonl', line: 3 });
    expect(r.sessions[0]?.title).toBe('Renamed chat');
    expect(r.sessions[0]?.events.at(-1)?.text).toBe('third answer');
  });

  it('bad mutations are problems, never throws', () => {
    const lines = [
      JSON.stringify({ kind: 1, k: ['customTitle'], v: 'too early' }),
      log[0],
      JSON.stringify({ kind: 1, k: ['nope', 3, 'x'], v: 1 }),
      JSON.stringify({ kind: 9, k: ['requests'], v: [] }),
      JSON.stringify({ kind: 2, k: ['requests'], v: 'not an array' }),
      JSON.stringify({ kind: 1, k: ['__proto__'], v: { polluted: true } }),
      '[1, 2]',
    ];
    const r = parseVscodeChat('bad.jsonl', lines.join('\n'));
    expect(r.problems.map((p) => p.line)).toEqual([1, 3, 4, 5, 6, 7]);
    expect(r.unknownTypes).toEqual({ 'mutation:9': 1 });
    expect(only(r)).toHaveLength(2);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('parseVscodeChat response parts', () => {
  const session = (response: unknown[], extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ sessionId: 's', requests: [{ requestId: 'r1', message: { text: 'q' }, response, ...extra }] });

  it('keeps an unknown part kind whole as an unknown event, and counts it', () => {
    const part = { kind: 'brandNewPart', payload: { a: [1, 2] } };
    const r = parseVscodeChat('s.json', session([{ value: 'before ' }, part, { value: 'after' }]));
    expect(r.unknownTypes).toEqual({ brandNewPart: 1 });
    expect(only(r).map((e) => [e.key, e.kind, e.text, e.rawType])).toEqual([
      ['r1:user', 'user', 'q', 'request'],
      ['r1:resp:0', 'assistant', 'before ', 'markdownContent'],
      ['r1:resp:1', 'unknown', JSON.stringify(part), 'brandNewPart'],
      ['r1:resp:2', 'assistant', 'after', 'markdownContent'],
    ]);
  });

  it('merges markdown and inline references in order; silent parts do not split the reply', () => {
    const ref = { kind: 'inlineReference', inlineReference: { $mid: 1, scheme: 'file', path: '/src/app.ts', fsPath: '/src/app.ts' } };
    const parts = [{ value: 'See ' }, ref, { kind: 'undoStop', id: 'u' }, { kind: 'markdownContent', content: { value: ' for details.' } },
      { kind: 'codeblockUri', uri: { scheme: 'file', path: '/src/app.ts' } }, { kind: 'thinking', value: '' }];
    const events = only(parseVscodeChat('s.json', session(parts)));
    expect(events.filter((e) => e.kind !== 'user').map((e) => [e.key, e.kind, e.text])).toEqual([['r1:resp:0', 'assistant', 'See app.ts for details.']]);
  });

  it('an edit group is an assistant event naming the file and edit count; an orphan preparation is system', () => {
    const edit = { kind: 'textEditGroup', uri: { scheme: 'file', path: '/src/a.ts', fsPath: '/src/a.ts' }, edits: [[{ text: 'x = 1' }, { text: 'y = 2' }], []], done: true };
    const events = only(parseVscodeChat('s.json', session([edit, { kind: 'prepareToolInvocation', toolName: 'run_in_terminal' }], { isCanceled: true })));
    expect(events.slice(1).map((e) => [e.kind, e.text, e.rawType])).toEqual([
      ['assistant', 'Edited /src/a.ts (2 edits)\nx = 1\ny = 2', 'textEditGroup'],
      ['system', 'Preparing tool call: run_in_terminal', 'prepareToolInvocation'],
      ['system', 'Request canceled', 'canceled'],
    ]);
  });

  it('a terminal tool call carries its command and a non-zero exit is an error', () => {
    const inv = {
      kind: 'toolInvocationSerialized', toolId: 'run_in_terminal', toolCallId: 'c1', invocationMessage: 'Running `npm test`', isComplete: true,
      toolSpecificData: { kind: 'terminal', commandLine: { original: 'npm test' }, language: 'sh', terminalCommandOutput: { text: '1 failing' }, terminalCommandState: { exitCode: 1 } },
    };
    const events = only(parseVscodeChat('s.json', session([inv])));
    expect(events[1]).toMatchObject({ kind: 'tool_call', toolName: 'run_in_terminal', callId: 'c1', text: 'Running `npm test`\nnpm test', toolInput: { command: 'npm test' } });
    expect(events[2]).toMatchObject({ kind: 'tool_result', callId: 'c1', text: '1 failing', isError: true });
  });

  it('never throws on hostile shapes', () => {
    const inputs = [
      '', 'null', '[]', '"x"', '{}', '{"requests": 5}',
      '{"requests": [null, 3, {"response": "no"}, {"message": 7, "response": [null, 1, "s", {"kind": 5}]}]}',
      JSON.stringify({ requests: [{ requestId: 'r', response: [
        { kind: 'toolInvocationSerialized', resultDetails: { output: [null, { mimeType: 'image/png' }] }, toolSpecificData: 3 }] }] }),
    ];
    for (const text of inputs) {
      for (const file of ['f.json', 'f.jsonl']) expect(() => parseVscodeChat(file, text)).not.toThrow();
    }
    const r = parseVscodeChat('f.json', inputs[6] ?? '');
    expect(only(r).filter((e) => e.kind === 'unknown').map((e) => e.rawType)).toEqual(['number', 'string', '(no kind)']);
  });
});
