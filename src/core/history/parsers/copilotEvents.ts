/**
 * Copilot's event logs: the Copilot CLI's `session-state/<id>/events.jsonl` and Copilot Chat's
 * own `GitHub.copilot-chat/transcripts/<id>.jsonl`. Both write one `{type, data, id,
 * timestamp, parentId}` envelope per line, append-only, so every key must stay the same as the
 * file grows.
 *
 * Decisions worth knowing when reading the output:
 * - A tool call appears twice in the source (in `assistant.message.toolRequests` and as
 *   `tool.execution_start`); it becomes ONE tool_call event, placed and keyed where it first
 *   appears (`<line id>:call:<toolCallId>`), which an append cannot move. A request never
 *   executed still counts; an execution with no request is a call of its own.
 * - One assistant event per `assistant.message` with text; its `reasoningText` is a separate
 *   reasoning event. runKey = the id of the `user.message` that started the run.
 * - Turn markers, usage, deltas and progress carry no content of their own and yield no
 *   event (usage and model changes still update the model); session notices are 'system'.
 * - parentKey is the nearest earlier line (by `parentId`) that produced an event.
 */
import type { HistorySource, ParsedEvent, ParseProblem, ParseResult, TranscriptParser } from '../parsedSession';
import { asArray, asEpochMs, asNonEmptyString, asRecord, asString, bump, compactJson, forEachJsonLine, tryParseJson, type JsonRecord } from './json';

const SILENT = new Set([
  'assistant.turn_start', 'assistant.turn_end', 'assistant.usage', 'assistant.message_delta', 'assistant.message_start',
  'assistant.reasoning_delta', 'assistant.streaming_delta', 'assistant.tool_call_delta', 'assistant.idle', 'session.idle',
  'session.title_changed', 'tool.execution_partial_result', 'tool.execution_progress', 'pending_messages.modified',
  'session.usage_info', 'session.background_tasks_changed',
]);

const SYSTEM = new Set([
  'session.resume', 'session.info', 'session.warning', 'session.error', 'session.model_change',
  'session.mode_changed', 'session.plan_changed', 'session.todos_changed', 'session.workspace_file_changed', 'session.handoff',
  'session.truncation', 'session.snapshot_rewind', 'session.shutdown', 'session.compaction_start', 'session.compaction_complete',
  'session.context_changed', 'session.context_cleared', 'assistant.intent', 'abort', 'system.message', 'system.notification',
  'tool.user_requested', 'skill.invoked', 'subagent.started', 'subagent.completed', 'subagent.failed', 'subagent.selected',
  'subagent.deselected', 'hook.start', 'hook.end', 'permission.requested', 'permission.completed',
]);

interface Line { rec: JsonRecord; type: string; id: string; data: JsonRecord; at?: number }

export const parseCopilotEvents: TranscriptParser = (file, text) => {
  const problems: ParseProblem[] = [];
  const unknownTypes: Record<string, number> = {};
  try {
    return parseLines(file, readLines(file, text, problems), problems, unknownTypes);
  } catch (e) {
    // Last resort: a shape no check anticipated costs this file, never the whole import.
    problems.push({ file, reason: `parser failed: ${e instanceof Error ? e.message : String(e)}` });
    return { sessions: [], problems, unknownTypes };
  }
};

function parseLines(file: string, lines: Line[], problems: ParseProblem[], unknownTypes: Record<string, number>): ParseResult {
  if (lines.length === 0) return { sessions: [], problems, unknownTypes };

  const events: ParsedEvent[] = [];
  const calls = new Map<string, ParsedEvent>();
  const lineKey = new Map<string, string>();
  const lineParent = new Map<string, string>();
  let sessionId: string | undefined;
  let startedAt: number | undefined;
  let workspace: string | undefined;
  let model: string | undefined;
  let title: string | undefined;
  let firstPrompt: string | undefined;
  let fromVscode = /github\.copilot-chat/i.test(file);
  let runKey: string | undefined;

  for (const line of lines) {
    const { rec, type, id, data, at } = line;
    const parentId = asNonEmptyString(rec.parentId);
    if (parentId) lineParent.set(id, parentId);
    const parentKey = nearestEmitted(parentId, lineKey, lineParent);
    const emitted: ParsedEvent[] = [];
    const push = (e: Omit<ParsedEvent, 'at' | 'runKey' | 'parentKey' | 'rawType'>): void => {
      emitted.push({ ...e, at, runKey, parentKey, rawType: type });
    };
    const call = (callId: string | undefined, index: number, name: string | undefined, args: unknown, extra?: string): void => {
      const existing = callId ? calls.get(callId) : undefined;
      if (existing) {
        existing.toolName ??= name;
        existing.toolInput ??= args;
        return;
      }
      const toolName = name ?? 'unknown_tool';
      const argText = args === undefined ? '' : ` ${typeof args === 'string' ? args : compactJson(args)}`;
      const e: Omit<ParsedEvent, 'at' | 'runKey' | 'parentKey' | 'rawType'> = {
        key: `${id}:call:${callId ?? index}`, kind: 'tool_call', text: `${extra ? `${extra}\n` : ''}${toolName}${argText}`,
        toolName: name, callId, toolInput: args, model,
      };
      push(e);
      const made = emitted[emitted.length - 1];
      if (callId && made) calls.set(callId, made);
    };

    switch (type) {
      case 'session.start': {
        sessionId ??= asNonEmptyString(data.sessionId);
        startedAt ??= asEpochMs(data.startTime) ?? at;
        workspace ??= asNonEmptyString(asRecord(data.context)?.cwd);
        model = asNonEmptyString(data.selectedModel) ?? model;
        if (data.vscodeVersion !== undefined) fromVscode = true;
        const who = [asString(data.producer), asString(data.copilotVersion), asString(data.vscodeVersion) && `VS Code ${asString(data.vscodeVersion)}`];
        push({ key: id, kind: 'system', text: `Session started${who.some((s) => s) ? ` (${who.filter((s) => s).join(', ')})` : ''}` });
        break;
      }
      case 'user.message': {
        runKey = id;
        const content = asString(data.content) ?? '';
        firstPrompt ??= content.trim() || undefined;
        push({ key: id, kind: 'user', text: content });
        break;
      }
      case 'assistant.message': {
        const reasoning = asNonEmptyString(data.reasoningText);
        if (reasoning) push({ key: `${id}:reasoning`, kind: 'reasoning', text: reasoning, model });
        const content = asString(data.content) ?? '';
        if (content.trim()) push({ key: id, kind: 'assistant', text: content, model });
        (asArray(data.toolRequests) ?? []).forEach((r, i) => {
          const req = asRecord(r);
          if (!req) return;
          const summary = asNonEmptyString(req.intentionSummary) ?? asNonEmptyString(req.toolTitle);
          call(asNonEmptyString(req.toolCallId), i, asNonEmptyString(req.name), decodeArgs(req.arguments), summary);
        });
        break;
      }
      case 'assistant.reasoning': {
        const content = asString(data.content) ?? '';
        if (content.trim()) push({ key: id, kind: 'reasoning', text: content, model });
        break;
      }
      case 'tool.execution_start':
        call(asNonEmptyString(data.toolCallId), 0, asNonEmptyString(data.toolName), decodeArgs(data.arguments));
        break;
      case 'tool.execution_complete': {
        const callId = asNonEmptyString(data.toolCallId);
        const error = asRecord(data.error);
        push({
          key: id, kind: 'tool_result', text: resultText(data), callId, model: asNonEmptyString(data.model) ?? model,
          toolName: (callId ? calls.get(callId)?.toolName : undefined) ?? asNonEmptyString(data.toolName),
          isError: data.success === false || error !== undefined,
        });
        break;
      }
      case 'session.task_complete':
        push({ key: id, kind: 'summary', text: asString(data.summary) ?? compactJson(data) });
        break;
      default:
        if (SYSTEM.has(type)) push({ key: id, kind: 'system', text: systemText(type, data) });
        else if (!SILENT.has(type)) {
          bump(unknownTypes, type);
          push({ key: id, kind: 'unknown', text: compactJson(rec) });
        }
    }
    // State changes apply after the line's own events, so a model change is not attributed to itself.
    if (type === 'session.model_change') model = asNonEmptyString(data.newModel) ?? model;
    if (type === 'assistant.usage') model = asNonEmptyString(data.model) ?? model;
    if (type === 'session.title_changed') title = asNonEmptyString(data.title) ?? title;
    const first = emitted[0];
    if (first) lineKey.set(id, first.key);
    for (const e of emitted) events.push(e);
  }

  const times = lines.map((l) => l.at).filter((t): t is number => t !== undefined);
  const latest = times.reduce<number | undefined>((m, t) => (m === undefined || t > m ? t : m), undefined);
  const earliest = times.reduce<number | undefined>((m, t) => (m === undefined || t < m ? t : m), undefined);
  const source: HistorySource = fromVscode ? 'copilot-transcript' : 'copilot-cli';
  return {
    sessions: [{
      source,
      externalId: sessionId ?? idFromPath(file),
      title: title ?? (firstPrompt ? oneLine(firstPrompt, 200) : undefined),
      workspace,
      model,
      startedAt: startedAt ?? earliest,
      updatedAt: latest,
      events,
    }],
    problems,
    unknownTypes,
  };
}

function readLines(file: string, text: string, problems: ParseProblem[]): Line[] {
  const out: Line[] = [];
  const seen = new Set<string>();
  forEachJsonLine(file, text, problems, (rec, n) => {
    // Position keys stand in for a missing or repeated id: the file only grows, so positions hold.
    let id = asNonEmptyString(rec.id) ?? `line:${n}`;
    if (seen.has(id)) id = `${id}#line:${n}`;
    seen.add(id);
    out.push({ rec, id, type: asNonEmptyString(rec.type) ?? '(no type)', data: asRecord(rec.data) ?? {}, at: asEpochMs(rec.timestamp) });
  });
  return out;
}

function nearestEmitted(parentId: string | undefined, lineKey: Map<string, string>, lineParent: Map<string, string>): string | undefined {
  const visited = new Set<string>();
  for (let id = parentId; id && !visited.has(id); id = lineParent.get(id)) {
    visited.add(id);
    const key = lineKey.get(id);
    if (key) return key;
  }
  return undefined;
}

/** Copilot Chat stores tool arguments as a JSON string, the CLI as an object: both become the value. */
function decodeArgs(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  const parsed = tryParseJson(args);
  return parsed.ok ? parsed.value : args;
}

function resultText(data: JsonRecord): string {
  const result = asRecord(data.result);
  const content = asString(result?.content) ?? (typeof data.result === 'string' ? data.result : undefined);
  const detailed = asString(result?.detailedContent);
  const error = asRecord(data.error);
  const errorText = asString(error?.message) ?? (typeof data.error === 'string' ? data.error : undefined);
  const pieces = [content, detailed !== content ? detailed : undefined, errorText].filter((s): s is string => s !== undefined && s !== '');
  return pieces.join('\n') || (data.success === false ? 'Tool failed' : '');
}

function systemText(type: string, data: JsonRecord): string {
  switch (type) {
    case 'session.model_change':
      return `Model changed${asString(data.previousModel) ? ` from ${asString(data.previousModel)}` : ''} to ${asString(data.newModel) ?? 'unknown'}`;
    case 'session.info':
    case 'session.warning': {
      const what = asString(data.infoType) ?? asString(data.warningType);
      return `${what ? `[${what}] ` : ''}${asString(data.message) ?? compactJson(data)}`;
    }
    case 'session.error':
      return `${asString(data.errorType) ? `${asString(data.errorType)}: ` : ''}${asString(data.message) ?? compactJson(data)}`;
    case 'abort':
      return `Aborted${asString(data.reason) ? `: ${asString(data.reason)}` : ''}`;
    default: {
      const text = asString(data.message) ?? asString(data.content) ?? asString(data.summary) ?? asString(data.intent);
      return text ?? `${type} ${compactJson(data)}`;
    }
  }
}

function idFromPath(file: string): string {
  const parts = file.split(/[\\/]/).filter((s) => s !== '');
  const name = (parts.pop() ?? file).replace(/\.jsonl$/i, '');
  // The CLI names every log events.jsonl and puts the session id on its folder.
  return name === 'events' ? (parts.pop() ?? name) : name;
}

function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
