import type { TranscriptParser } from '../parsedSession';
import { parseClaudeCode } from './claudeCode';
import { parseCodex } from './codex';
import { parseCopilotEvents } from './copilotEvents';
import { parseVscodeChat } from './vscodeChat';

export type TranscriptFormat = 'vscode-chat-json' | 'vscode-chat-jsonl' | 'copilot-events' | 'claude-code' | 'codex';

const PARSERS: Record<TranscriptFormat, TranscriptParser> = {
  'vscode-chat-json': parseVscodeChat,
  'vscode-chat-jsonl': parseVscodeChat,
  'copilot-events': parseCopilotEvents,
  'claude-code': parseClaudeCode,
  codex: parseCodex,
};

/** Formats whose file is the whole session each time (rewritten, not appended): vanished events are removed. */
export function isSnapshotFormat(format: TranscriptFormat): boolean {
  return format === 'vscode-chat-json' || format === 'vscode-chat-jsonl';
}

/**
 * Knows a transcript by its content, not its folder, because people copy and export them
 * anywhere; the first few records are enough to tell the formats apart.
 */
export function detectTranscript(file: string, text: string): { format: TranscriptFormat; parser: TranscriptParser } | undefined {
  const format = file.endsWith('.json') ? detectJson(text) : detectJsonl(text);
  return format ? { format, parser: PARSERS[format] } : undefined;
}

function detectJson(text: string): TranscriptFormat | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) && Array.isArray(value.requests) ? 'vscode-chat-json' : undefined;
  } catch {
    return undefined;
  }
}

function detectJsonl(text: string): TranscriptFormat | undefined {
  let looked = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (++looked > 20) break;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isRecord(record)) continue;
    const type = typeof record.type === 'string' ? record.type : '';
    if (typeof record.kind === 'number' && 'v' in record) return 'vscode-chat-jsonl';
    if (/^(session|user|assistant|tool|hook|subagent)\.[a-z_.]+$/.test(type) && 'data' in record) return 'copilot-events';
    if (['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted'].includes(type)) return 'codex';
    if ('parentUuid' in record || ('sessionId' in record && ['user', 'assistant', 'summary', 'system', 'queue-operation'].includes(type))) return 'claude-code';
    if (type === 'summary' && 'leafUuid' in record) return 'claude-code';
    // The older Codex form: bare response items, or a header line with id + instructions.
    if ((type === 'message' && 'role' in record) || type === 'function_call' || type === 'reasoning' || ('id' in record && 'instructions' in record)) return 'codex';
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
