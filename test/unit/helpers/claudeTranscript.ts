import * as fs from 'node:fs';
import * as path from 'node:path';

/** One step of a hand-written Claude Code session, in the real JSONL shape the importer reads. */
export type Step =
  | { user: string }
  | { assistant: string }
  | { tool: string; id: string; input: unknown }
  | { result: string; id: string };

/**
 * Writes a Claude Code transcript (`<sessionId>.jsonl`, one JSON record per line, chained by
 * parentUuid) for cases the shared fixtures do not hold: an unfinished last turn, hostile text.
 */
export function writeClaudeSession(dir: string, sessionId: string, steps: readonly Step[], cwd = '/work/demo', startMs = Date.UTC(2025, 9, 1, 12)): string {
  let parent: string | null = null;
  const lines = steps.map((s, i) => {
    const uuid = `${sessionId.slice(0, 8)}-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const base = { parentUuid: parent, isSidechain: false, userType: 'external', cwd, sessionId, version: '1.0.98', uuid, timestamp: new Date(startMs + i * 1000).toISOString() };
    parent = uuid;
    if ('user' in s) return { ...base, type: 'user', message: { role: 'user', content: s.user } };
    if ('assistant' in s) return { ...base, type: 'assistant', message: { role: 'assistant', model: 'claude-test', content: [{ type: 'text', text: s.assistant }] } };
    if ('tool' in s) return { ...base, type: 'assistant', message: { role: 'assistant', model: 'claude-test', content: [{ type: 'tool_use', id: s.id, name: s.tool, input: s.input }] } };
    return { ...base, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: s.id, content: s.result }] } };
  });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${sessionId}.jsonl`);
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}
