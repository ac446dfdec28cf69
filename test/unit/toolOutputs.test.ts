import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/core/tools/registry';
import { writeClaudeSession } from './helpers/claudeTranscript';
import { transcriptFixtures } from './helpers/fixtures';
import { CLI } from './helpers/mcpClient';
import { tempHome } from './helpers/tempStore';

type Json = Record<string, unknown>;
type Schema = { properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; additionalProperties?: unknown };

/**
 * Fields an answer carries that its outputSchema does not name, as dotted paths. The schemas stay
 * open (a later field must not break an older client), so the SDK client's validation alone cannot
 * see a field the schema forgot; this walk can. Under `anyOf` a field is named when any branch names it.
 */
function undeclaredFields(value: unknown, schema: Schema, at = ''): string[] {
  const branches = (s: Schema): Schema[] => (s.anyOf ? s.anyOf.flatMap(branches) : [s]);
  const all = branches(schema);
  if (Array.isArray(value)) {
    const items = all.flatMap((s) => (s.items ? [s.items] : []));
    if (!items.length) return [];
    return value.flatMap((v) => undeclaredFields(v, { anyOf: items }, `${at}[]`));
  }
  if (!value || typeof value !== 'object') return [];
  const withProps = all.filter((s) => s.properties);
  // An object whose fields are open by design (a map keyed by name, tool input) names none.
  if (!withProps.length) return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const declared = withProps.flatMap((s) => (s.properties?.[key] ? [s.properties[key]] : []));
    const here = at ? `${at}.${key}` : key;
    if (!declared.length) out.push(here);
    else out.push(...undeclaredFields(v, { anyOf: declared }, here));
  }
  return out;
}

const SESSION = '7d1f0c2e-5b4a-4c3d-9e8f-0a1b2c3d4e5f';

/**
 * Every tool, called with valid input through the official MCP SDK client on a real store (the
 * real transcripts imported by `recollect import`, plus one Claude Code session in the server's
 * own folder so "this session" is found). The client validates each structuredContent against the
 * tool's listed outputSchema and throws when it does not fit; the test also finds every field the
 * answer carries named in that schema.
 */
describe('every tool answers inside its outputSchema (official SDK client, real server, real store)', () => {
  let client: Client;
  let listed: Tool[];
  const answers = new Map<string, Json[]>();
  let env: NodeJS.ProcessEnv;
  let workspace: string;

  beforeAll(async () => {
    const home = tempHome('tool-outputs');
    workspace = tempHome('tool-outputs-ws');
    const personHome = tempHome('tool-outputs-person');
    const sessions = tempHome('tool-outputs-sessions');
    writeClaudeSession(
      sessions,
      SESSION,
      [
        { user: 'Set up the deploy script' },
        { tool: 'Bash', id: 'toolu_o1', input: { command: 'ls scripts' } },
        { result: 'deploy.sh\nbuild.sh', id: 'toolu_o1' },
        { assistant: 'The deploy script is scripts/deploy.sh.' },
        { user: 'Now plan the release' },
        { tool: 'TodoWrite', id: 'toolu_o2', input: { todos: [{ content: 'Tag the release', status: 'in_progress', activeForm: 'Tagging' }, { content: 'Publish', status: 'pending', activeForm: 'Publishing' }] } },
        { result: 'Todos have been modified successfully.', id: 'toolu_o2' },
        { assistant: 'The release is planned.' },
        { user: 'Run the deploy' },
        { tool: 'Bash', id: 'toolu_o3', input: { command: 'bash scripts/deploy.sh' } },
        { result: 'deployed v1.2.0', id: 'toolu_o3' },
        { assistant: 'Deployed v1.2.0.' },
      ],
      workspace,
      Date.now() - 3_600_000,
    );
    env = { ...process.env, RECOLLECT_HOME: home, HOME: personHome };
    const imported = spawnSync(process.execPath, [CLI, 'import', transcriptFixtures(), sessions], { env, encoding: 'utf8' });
    expect(imported.status, imported.stderr).toBe(0);
    // The other agent requests are exchanged with, so ask_agent has someone who has connected.
    const reviewer = await connect(env, workspace, 'reviewer');
    await reviewer.callTool({ name: 'ask_agent', arguments: { to: 'claude-code', request: 'Please check the deploy script.' } }).catch(() => undefined);
    await reviewer.close();
    client = await connect(env, workspace, 'claude-code');
    listed = (await client.listTools()).tools;
    // claude-code had not connected when reviewer asked; now it has, so ask again.
    const again = await connect(env, workspace, 'reviewer');
    await again.callTool({ name: 'ask_agent', arguments: { to: 'claude-code', request: 'Please check the deploy script.' } });
    await again.close();
  }, 120_000);

  afterAll(async () => {
    await client?.close();
  });

  async function call(name: string, args: Json): Promise<Json> {
    const res = await client.callTool({ name, arguments: args });
    const structured = res.structuredContent as Json;
    const text = (res.content as { type: string; text?: string }[])[0]?.text ?? '';
    expect(structured, name).toEqual(JSON.parse(text));
    answers.set(name, [...(answers.get(name) ?? []), structured]);
    return structured;
  }

  it('answers every tool with valid input, and every answer validates', async () => {
    const ok = async (name: string, args: Json) => {
      const a = await call(name, args);
      expect(a.ok, `${name}: ${JSON.stringify(a).slice(0, 400)}`).toBe(true);
      return a;
    };
    // Memory
    const note = await ok('remember', { statement: 'The deploy script lives in scripts/deploy.sh and needs AWS_PROFILE set.' });
    const fact = await ok('remember', { statement: 'Deploys use scripts/deploy.sh', subject: 'deploy', predicate: 'tool', object: 'scripts/deploy.sh' });
    await ok('save_memory', { subject: 'ci', predicate: 'runner', object: 'github actions' });
    await ok('save_memory', { subject: 'ci', predicate: 'runner', object: 'buildkite' });
    await ok('remember_note', { text: 'Looked at the parser today; the tokenizer is slow on long lines.' });
    await ok('retrieve_memory', { subject: 'ci', include_history: true });
    await ok('search_text', { query: 'deploy' });
    await ok('memory_status', {});
    await ok('get_context', { query: 'how do we deploy?' });
    await ok('get_context', {});
    await call('search_memory', { query: 'how do we deploy' });
    await ok('search_history', { query: 'parser' });
    await ok('lookup_entity', { name: 'deploy' });
    await ok('memory_map', {});
    await ok('memory_map', { query: 'deploy' });
    await ok('read_memory', { id: note.id });
    await ok('read_memory', { id: fact.id });
    await ok('read_memory', { id: `note:${String(note.path)}` });
    await ok('retire_memory', { id: note.id });
    await ok('restore_memory', { id: note.id });
    await ok('retire_memory', { id: fact.id });
    await ok('restore_memory', { id: fact.id });
    await ok('get_context', { query: 'may I deploy on a Friday?', scope: 'global', include_history: true });
    await ok('index_memory', {});
    await ok('export_memory', {});
    const preview = await ok('preview_import', { label: 'old-notes', files: [{ relativePath: 'release.md', markdown: '# Release\n\nTag, then publish.\n' }] });
    await ok('preview_import', { label: 'old-notes', files: [{ relativePath: 'release.md', markdown: '# Release\n' }], stage: false });
    await ok('apply_import', { batchId: preview.batchId });
    await ok('undo_import', { batchId: preview.batchId });
    // The note the import made, now retired: read_memory answers for a vault note.
    await ok('read_memory', { id: 'note:Imported/old-notes/release.md' });

    // History and errors
    const list = await ok('chat_history', { mode: 'list' });
    const runs = list.runs as { task_id: string }[];
    expect(runs.length).toBeGreaterThan(0);
    await ok('chat_history', { mode: 'read', task_id: runs.map((r) => r.task_id) });
    await ok('chat_history', { mode: 'read', task_id: runs[0]!.task_id, scope: 'full' });
    const tools = await ok('chat_history', { mode: 'tool_list' });
    const first = (tools.calls as { task_id: string; name: string }[])[0]!;
    await ok('chat_history', { mode: 'tool', task_id: first.task_id, name: first.name });
    await ok('chat_history', { mode: 'search', query: 'deploy', match: 'keyword' });
    await ok('chat_history', { mode: 'search', query: 'deploy', match: 'semantic' });
    await ok('chat_history', { mode: 'search', query: 'deploy' });
    const written = await ok('write_error', {
      tool_name: 'read_file',
      keywords: ['ENOENT', 'path'],
      symptom: 'ENOENT: no such file or directory',
      cause: 'a relative path',
      action: 'pass an absolute path',
      outcome: 'resolved',
    });
    await ok('write_error', { tool_name: 'read_file', keywords: ['EACCES'], symptom: 'EACCES', action: 'retry', outcome: 'failed' });
    await ok('error_history', { query: 'ENOENT' });
    await ok('error_history', { hash: written.hash });
    await ok('reasoning_guide', { topics: ['tool_error', 'write_todo'] });
    await ok('write_result', { content: '# Deploy review\n\nAll good.\n' });

    // Requests between agents
    const news = await ok('whats_new', {});
    const request = (news.open_requests as { id: string }[])[0]!;
    await ok('ask_agent', { to: 'reviewer', request: 'Did the deploy pass?' });
    await ok('list_requests', {});
    await ok('list_requests', { to: 'reviewer' });
    await ok('answer_request', { id: request.id, answer: 'Checked: it is fine.' });
    await ok('close_request', { id: request.id });

    // Lossless context
    const grep = await ok('lcm_grep', { pattern: 'lmstudio', allConversations: true, scope: 'summaries' });
    await ok('lcm_grep', { pattern: 'deploy', mode: 'full_text', allConversations: true });
    const summary = (grep.matches as { id: string }[])[0]!;
    await ok('lcm_describe', { id: summary.id, allConversations: true });
    await ok('lcm_expand_query', { prompt: 'what about lmstudio?', query: 'lmstudio', allConversations: true });
    // Only the expansion sub-agent may call lcm_expand; from a client it is always this refusal.
    expect(await call('lcm_expand', { summaryIds: [summary.id] })).toMatchObject({ ok: false });

    // Chapters
    const seg = await ok('chapters_segment', {});
    const ranges = (seg.ranges as { startSeq: number; endSeq: number; title: string; summary: string }[]).map(({ startSeq, endSeq, title, summary }) => ({ startSeq, endSeq, title, summary }));
    const cont = await ok('chapters_continue', { chapters: ranges, handoffNote: 'Deploy next.' });
    await ok('chapters_fork', { handoffNote: 'Try a blue-green deploy instead.' });
    await ok('chapters_search', { query: 'deploy' });
    const chapter = (cont.chapters as { id: string }[])[0]!;
    await ok('chapters_artifact', { ref: chapter.id });
    await ok('chapters_artifact', { ref: chapter.id, action: 'search', query: 'deploy' });
    await ok('chapters_artifact', { ref: chapter.id, action: 'read' });
    await ok('chapters_rule_propose', { text: 'Run the deploy script only from a clean checkout.', scope: 'project', category: 'workflow' });
    await ok('chapters_rules', { task: 'deploy the release' });

    expect(TOOLS.filter((t) => !answers.has(t.name)).map((t) => t.name)).toEqual([]);

    // The same store with recall by meaning off: the answers that say so.
    await client.close();
    client = await connect({ ...env, RECOLLECT_EMBEDDINGS: 'off' }, workspace, 'claude-code');
    listed = (await client.listTools()).tools;
    expect(await ok('search_memory', { query: 'how do we deploy' })).toMatchObject({ semantic: false });
    expect(await ok('get_context', { query: 'how do we deploy?' })).toMatchObject({ semantic: { off: expect.any(String) } });
    expect(await ok('chat_history', { mode: 'search', query: 'deploy', match: 'semantic' })).toMatchObject({ semantic: false });
    expect(await ok('memory_status', {})).toMatchObject({ semantic: false });
  }, 180_000);

  it('keeps every object of every outputSchema open, so a field added later breaks no client', () => {
    const closed = listed.filter((t) => JSON.stringify(t.outputSchema).includes('"additionalProperties":false')).map((t) => t.name);
    expect(closed).toEqual([]);
  });

  it('names in each outputSchema every field the answers carry', () => {
    expect(answers.size).toBe(TOOLS.length);
    const missing: string[] = [];
    for (const [name, list] of answers) {
      const schema = listed.find((t) => t.name === name)?.outputSchema as Schema;
      for (const a of list) missing.push(...undeclaredFields(a, schema).map((f) => `${name}: ${f}`));
    }
    expect([...new Set(missing)]).toEqual([]);
  });
});

async function connect(env: NodeJS.ProcessEnv, cwd: string, name: string): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: env as Record<string, string>, cwd, stderr: 'pipe' });
  const c = new Client({ name, version: '1.0.0' });
  await c.connect(transport);
  return c;
}
