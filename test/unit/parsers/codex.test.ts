import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ParseResult } from '../../../src/core/history/parsedSession';
import { parseCodex } from '../../../src/core/history/parsers/codex';
import { transcriptFixtures } from '../helpers/fixtures';
import { countKinds, jsonl, type Counts } from './parserTestKit';

const DIR = path.join(transcriptFixtures(), 'codex');
const read = (name: string): string => fs.readFileSync(path.join(DIR, name), 'utf8');
const parse = (name: string, text = read(name)): ParseResult => parseCodex(path.join(DIR, name), text);

const ROLLOUT = 'rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl';
const SIMONW = 'simonw_sample_codex_session_0.77.0.jsonl';

/**
 * Derived independently of the parser, by a python3 one-off over each file, counting
 * `response_item` payloads only: message role user → 'system' when the text starts with
 * <environment_context>/<user_instructions>/<INSTRUCTIONS>/"# AGENTS.md instructions for ",
 * else 'user'; role assistant → assistant; reasoning with a non-empty summary or content;
 * function_call/custom_tool_call/local_shell_call/web_search_call; *_call_output, an error
 * when its JSON output has metadata.exit_code ≠ 0. The rollout's event_msg stream repeats
 * 1 user_message and 39 agent_reasoning (= the 39 summary parts of its 38 reasoning items,
 * one of which is empty), none of which may show up twice. Neither file holds an assistant
 * message: the rollout ends mid-task, the sample after the first prompt.
 */
const FIXTURES: Record<string, { counts: Counts; externalId: string; workspace: string; model: string }> = {
  [ROLLOUT]: {
    counts: { system: 1, user: 1, reasoning: 37, tool_call: 39, tool_result: 39, errors: 3 },
    externalId: '019a93b9-f380-7600-98ff-940e6b99603c',
    workspace: '/home/user/projects/temp/chatbot-ui',
    model: 'gpt-5.1-codex',
  },
  [SIMONW]: {
    counts: { system: 2, user: 1 },
    externalId: '019b64e5-57fa-7463-b644-fba7e456f905',
    workspace: '/Users/macmini/Code/homelab-migration',
    model: 'gpt-5.2-codex',
  },
};

describe('Codex parser on the real fixtures', () => {
  it('the table covers every Codex fixture file', () => {
    expect(fs.readdirSync(DIR).filter((f) => f.endsWith('.jsonl')).sort()).toEqual(Object.keys(FIXTURES).sort());
  });

  it.each(Object.entries(FIXTURES))('%s', (name, want) => {
    const r = parse(name);
    expect(r.problems).toEqual([]);
    expect(r.unknownTypes).toEqual({});
    expect(r.sessions).toHaveLength(1);
    const s = r.sessions[0]!;
    expect(countKinds(s.events)).toEqual(want.counts);
    expect(s).toMatchObject({ source: 'codex', externalId: want.externalId, workspace: want.workspace, model: want.model });
    const calls = new Set(s.events.filter((e) => e.kind === 'tool_call').map((e) => e.callId));
    for (const e of s.events.filter((e) => e.kind === 'tool_result')) expect(calls.has(e.callId)).toBe(true);
    // One prompt, one run; the context messages before it belong to none.
    const prompt = s.events.find((e) => e.kind === 'user')!;
    expect(s.events.filter((e) => e.kind === 'system').every((e) => e.runKey === undefined)).toBe(true);
    expect(s.events.filter((e) => e.kind !== 'system').every((e) => e.runKey === prompt.key)).toBe(true);
  });

  it('reads the shell output out of its JSON wrapper and takes a non-zero exit as failure', () => {
    const s = parse(ROLLOUT).sessions[0]!;
    expect(s.title).toBe('finish up the users work by rigging up the chatbot-ui to use lmstudio instead o…');
    expect(s.startedAt).toBe(Date.parse('2025-11-17T21:30:28.664Z'));
    expect(s.updatedAt).toBe(Date.parse('2025-11-17T21:38:46.709Z'));
    const ls = s.events.find((e) => e.callId === 'call_GfHib9GW3d5m9EB1wMTper0j' && e.kind === 'tool_call')!;
    expect(ls).toMatchObject({ key: 'line:11', toolName: 'shell', text: 'ls', model: 'gpt-5.1-codex' });
    expect(ls.toolInput).toEqual({ command: ['bash', '-lc', 'ls'], workdir: '/home/user/projects/temp/chatbot-ui' });
    const out = s.events.find((e) => e.callId === ls.callId && e.kind === 'tool_result')!;
    expect(out.text.startsWith('LM Studio configuration.md\nREADME.md\n')).toBe(true);
    expect(out.isError).toBe(false);
    expect(s.events.find((e) => e.toolName === 'update_plan' && e.kind === 'tool_call')).toBeDefined();
    expect(s.events.filter((e) => e.kind === 'tool_result' && e.text === 'Plan updated')).toHaveLength(2);
    const multi = s.events.find((e) => e.key === 'line:268')!;
    expect(multi.kind).toBe('reasoning');
    const line = JSON.parse(read(ROLLOUT).split('\n')[267]!) as { payload: { summary: { text: string }[] } };
    expect(line.payload.summary).toHaveLength(3);
    expect(multi.text).toBe(line.payload.summary.map((p) => p.text).join('\n\n'));
  });

  it('gives stable keys: parsing twice agrees, and every prefix of a file yields a prefix of the events', () => {
    for (const name of Object.keys(FIXTURES)) {
      const text = read(name);
      const whole = parse(name, text);
      expect(parse(name, text)).toEqual(whole);
      const all = whole.sessions.flatMap((s) => s.events);
      const lines = text.split('\n');
      for (let n = 0; n <= lines.length; n++) {
        const part = parse(name, lines.slice(0, n).join('\n')).sessions.flatMap((s) => s.events);
        expect(part).toEqual(all.slice(0, part.length));
      }
    }
  });
});

describe('Codex parser on other shapes and damaged input', () => {
  const at = (s: number) => `2025-10-01T10:00:${String(s).padStart(2, '0')}.000Z`;
  const item = (s: number, payload: object) => ({ timestamp: at(s), type: 'response_item', payload });
  const event = (s: number, payload: object) => ({ timestamp: at(s), type: 'event_msg', payload });
  const msg = (role: string, text: string) => ({ type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] });
  const FILE = '/h/.codex/sessions/2025/10/01/rollout-2025-10-01T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000.jsonl';

  it('counts each message once although Codex writes it as a response item and as an event', () => {
    const r = parseCodex(
      FILE,
      jsonl(
        { timestamp: at(0), type: 'session_meta', payload: { id: 'sess-1', cwd: '/w' } },
        item(1, msg('user', '<environment_context>\n  <cwd>/w</cwd>\n</environment_context>')),
        item(2, msg('user', 'first')),
        event(2, { type: 'user_message', message: 'first', images: [] }),
        { timestamp: at(3), type: 'turn_context', payload: { cwd: '/w', model: 'gpt-5' } },
        event(4, { type: 'agent_reasoning', text: 'thinking' }),
        item(4, { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }], encrypted_content: 'zzz' }),
        event(5, { type: 'agent_message', message: 'done one' }),
        item(5, msg('assistant', 'done one')),
        event(5, { type: 'token_count', info: null }),
        item(6, msg('user', 'second')),
        event(6, { type: 'user_message', message: 'second', images: [] }),
        item(7, msg('assistant', 'done two')),
        { timestamp: at(8), type: 'compacted', payload: { message: 'we did two things' } },
      ),
    );
    const s = r.sessions[0]!;
    expect(s.events.map((e) => [e.key, e.kind, e.runKey])).toEqual([
      ['line:2', 'system', undefined],
      ['line:3', 'user', 'line:3'],
      ['line:7', 'reasoning', 'line:3'],
      ['line:9', 'assistant', 'line:3'],
      ['line:11', 'user', 'line:11'],
      ['line:13', 'assistant', 'line:11'],
      ['line:14', 'summary', 'line:11'],
    ]);
    expect(s.events[3]).toMatchObject({ text: 'done one', model: 'gpt-5', at: Date.parse(at(5)) });
    expect(s).toMatchObject({ externalId: 'sess-1', title: 'first', workspace: '/w', model: 'gpt-5' });
  });

  it('reads the older bare-item shape, with its header line and state lines', () => {
    const text = jsonl(
      { id: '0197aaaa-0000-7000-8000-000000000001', timestamp: '2025-06-01T09:00:00.000Z', instructions: 'be nice' },
      msg('user', '<user_instructions>\nbe nice\n</user_instructions>'),
      msg('user', 'list files'),
      { record_type: 'state' },
      { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'raw thoughts' }] },
      { type: 'function_call', name: 'shell', arguments: '{"command":["ls","-a"]}', call_id: 'c1' },
      { type: 'function_call_output', call_id: 'c1', output: '{"output":"nope","metadata":{"exit_code":2}}' },
      { type: 'local_shell_call', call_id: 'c2', status: 'completed', action: { type: 'exec', command: ['bash', '-lc', 'pwd'] } },
      { type: 'custom_tool_call', call_id: 'c3', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'c3', output: 'Done!' },
      { type: 'web_search_call', id: 'ws1', status: 'completed', action: { type: 'search', query: 'codex rollout' } },
      { record_type: 'state' },
      msg('assistant', 'here they are'),
    );
    const r = parseCodex('/old/rollout-2025-06-01-0197aaaa-0000-7000-8000-000000000001.jsonl', text);
    expect(r.problems).toEqual([]);
    expect(r.unknownTypes).toEqual({});
    const s = r.sessions[0]!;
    expect(s.externalId).toBe('0197aaaa-0000-7000-8000-000000000001');
    expect(s.startedAt).toBe(Date.parse('2025-06-01T09:00:00.000Z'));
    expect(s.events.map((e) => [e.kind, e.text, e.toolName ?? '', e.isError ?? ''])).toEqual([
      ['system', '<user_instructions>\nbe nice\n</user_instructions>', '', ''],
      ['user', 'list files', '', ''],
      ['reasoning', 'raw thoughts', '', ''],
      ['tool_call', 'ls -a', 'shell', ''],
      ['tool_result', 'nope', '', true],
      ['tool_call', 'pwd', 'local_shell', ''],
      ['tool_call', '*** Begin Patch', 'apply_patch', ''],
      ['tool_result', 'Done!', '', false],
      ['tool_call', 'codex rollout', 'web_search', ''],
      ['assistant', 'here they are', '', ''],
    ]);
    expect(new Set(s.events.slice(1).map((e) => e.runKey))).toEqual(new Set(['line:3']));
  });

  it('names a session by the uuid in the file name, else the file name', () => {
    const body = jsonl(msg('user', 'hi'));
    expect(parseCodex(FILE, body).sessions[0]!.externalId).toBe('0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000');
    expect(parseCodex('/x/notes.jsonl', body).sessions[0]!.externalId).toBe('notes');
  });

  it('reports a garbage line with its number, keeps unknown kinds whole and counts them', () => {
    const big = { type: 'image_generation_call', id: 'ig', result: 'x'.repeat(5000) };
    const r = parseCodex(
      FILE,
      [
        JSON.stringify(item(1, msg('user', 'hi'))),
        '{"timestamp": "2025-10-01T10:00:02.000Z", "type": "response_item", "payl',
        JSON.stringify(item(3, big)),
        JSON.stringify(event(4, { type: 'exited_review_mode', review_output: { findings: [] } })),
        JSON.stringify({ timestamp: at(5), type: 'brand_new_record', payload: { a: 1 } }),
        JSON.stringify(item(6, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }, { type: 'output_audio', data: 'aa' }] })),
        '42',
      ].join('\n'),
    );
    expect(r.problems).toEqual([
      expect.objectContaining({ file: FILE, line: 2, reason: expect.stringContaining('not JSON') }),
      expect.objectContaining({ file: FILE, line: 7, reason: 'not a JSON object' }),
    ]);
    expect(r.unknownTypes).toEqual({
      'response_item/image_generation_call': 1,
      'event_msg/exited_review_mode': 1,
      brand_new_record: 1,
      'response_item/message/output_audio': 1,
    });
    const events = r.sessions[0]!.events;
    expect(events.map((e) => [e.key, e.kind])).toEqual([
      ['line:1', 'user'],
      ['line:3', 'unknown'],
      ['line:4', 'unknown'],
      ['line:5', 'unknown'],
      ['line:6', 'assistant'],
      ['line:6:1', 'unknown'],
    ]);
    expect(events[1]!.text).toBe(JSON.stringify(item(3, big)));
    expect(events[5]!.text).toBe('{"type":"output_audio","data":"aa"}');
  });

  it('returns nothing, and throws nothing, for empty or metadata-only files', () => {
    expect(parseCodex(FILE, '')).toEqual({ sessions: [], problems: [], unknownTypes: {} });
    expect(parseCodex(FILE, jsonl({ timestamp: at(0), type: 'session_meta', payload: { id: 'x' } })).sessions).toEqual([]);
    expect(() => parseCodex(FILE, '{"type":"response_item"}\n{"type":"response_item","payload":null}\n{"type":"message"}\n')).not.toThrow();
  });
});
