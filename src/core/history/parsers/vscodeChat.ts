/**
 * VS Code chat sessions: `chatSessions/<id>.json` snapshots, `<id>.jsonl` mutation logs
 * (VS Code ≥ 1.109) and "Chat: Export Chat…" files — all one ISerializableChatData shape
 * once the log is replayed, so one reader serves them, wherever the file lives.
 *
 * Decisions:
 * - Consecutive markdown / inlineReference parts form ONE assistant event (keyed by the first
 *   part's index) so the reply reads as the user saw it; consecutive thinking parts form one
 *   reasoning event. Only a part that yields an event of its own ends such a run.
 * - `prepareToolInvocation` folds into the next invocation of the same tool; one left without
 *   its invocation (an interrupted turn) is kept as 'system'.
 * - `textEditGroup` / `notebookEditGroup` are 'assistant' events naming the file and edit count:
 *   the tool call that produced the edit is already counted, a tool_call would count it twice.
 * - Parts with nothing to say (`undoStop`, `codeblockUri`, empty thinking or markdown, an
 *   `mcpServersStarting` that started nothing) yield no event.
 * - An export has no session id: externalId is `<file name>#<first requestId>`. One with no
 *   requests is still a session, with zero events, so the file is known as parsed.
 */
import type { ParsedEvent, ParsedSession, ParseProblem, TranscriptParser } from '../parsedSession';
import {
  asArray, asEpochMs, asNonEmptyString, asNumber, asRecord, asString, bump, compactJson, isRecord, tryParseJson,
  type JsonRecord,
} from './json';

export const parseVscodeChat: TranscriptParser = (file, text) => {
  const problems: ParseProblem[] = [];
  const unknownTypes: Record<string, number> = {};
  try {
    const data = loadSnapshot(file, text, problems, unknownTypes);
    return { sessions: data ? [toSession(file, data, unknownTypes)] : [], problems, unknownTypes };
  } catch (e) {
    // Last resort: a shape no check anticipated costs this file, never the whole import.
    problems.push({ file, reason: `parser failed: ${e instanceof Error ? e.message : String(e)}` });
    return { sessions: [], problems, unknownTypes };
  }
};

// ---- reading the file: a whole snapshot, or a mutation log replayed into one ----

const isLogEntry = (v: unknown): boolean => isRecord(v) && typeof v.kind === 'number' && ('v' in v || 'k' in v);

function loadSnapshot(file: string, text: string, problems: ParseProblem[], unknownTypes: Record<string, number>): JsonRecord | undefined {
  if (!/\.jsonl$/i.test(file)) {
    const whole = tryParseJson(text);
    if (whole.ok && !isLogEntry(whole.value)) {
      const rec = asRecord(whole.value);
      if (rec && Array.isArray(rec.requests)) return rec;
      problems.push({ file, reason: 'not a VS Code chat session: no requests array' });
      return undefined;
    }
    // A log saved under another name is still a log; anything else is a broken snapshot.
    const first = tryParseJson(text.split('\n').find((l) => l.trim() !== '') ?? '');
    if (!whole.ok && !(first.ok && isLogEntry(first.value))) {
      problems.push({ file, reason: `unparseable JSON: ${whole.error}` });
      return undefined;
    }
  }
  const state = asRecord(replayLog(file, text, problems, unknownTypes));
  if (!state) problems.push({ file, reason: 'the mutation log does not replay to a chat object (no kind 0 snapshot?)' });
  return state;
}

type PathKey = string | number;

function replayLog(file: string, text: string, problems: ParseProblem[], unknownTypes: Record<string, number>): unknown {
  let state: unknown;
  text.split('\n').forEach((raw, idx) => {
    const line = idx + 1;
    if (raw.trim() === '') return;
    const parsed = tryParseJson(raw);
    if (!parsed.ok) return void problems.push({ file, line, reason: `unparseable line: ${parsed.error}` });
    const entry = asRecord(parsed.value);
    const kind = asNumber(entry?.kind);
    if (!entry || kind === undefined) return void problems.push({ file, line, reason: 'not a mutation entry (no numeric kind)' });
    if (kind === 0) return void (state = entry.v);
    if (state === undefined) return void problems.push({ file, line, reason: 'mutation before the initial snapshot' });
    const path = asArray(entry.k);
    if (!path || !path.every((p): p is PathKey => typeof p === 'string' || typeof p === 'number')) {
      return void problems.push({ file, line, reason: 'mutation without a valid path (k)' });
    }
    if (kind !== 1 && kind !== 2 && kind !== 3) {
      // The state such an entry would produce is unknowable, so it cannot become content.
      bump(unknownTypes, `mutation:${kind}`);
      return void problems.push({ file, line, reason: `unknown mutation kind ${kind}` });
    }
    if (kind === 1 && path.length === 0) return void (state = entry.v);
    const error = applyMutation(state, kind, path, entry);
    if (error) problems.push({ file, line, reason: error });
  });
  return state;
}

function applyMutation(state: unknown, kind: 1 | 2 | 3, path: PathKey[], entry: JsonRecord): string | undefined {
  const last = path[path.length - 1];
  if (last === undefined) return 'mutation with an empty path';
  let parent: unknown = state;
  for (const key of path.slice(0, -1)) parent = child(parent, key);
  if (!isRecord(parent) && !Array.isArray(parent)) return `path ${JSON.stringify(path)} not found`;
  if (last === '__proto__') return 'refusing to write __proto__';
  const container = parent as Record<PathKey, unknown>;
  if (kind === 1) container[last] = entry.v;
  else if (kind === 3) {
    if (Array.isArray(parent)) container[last] = undefined; // keep later indexes where later entries expect them
    else delete container[last];
  } else {
    const items = entry.v === undefined ? [] : asArray(entry.v);
    if (!items) return 'push (kind 2) whose v is not an array';
    const current = container[last];
    const arr: unknown[] = Array.isArray(current) ? current : [];
    const at = asNumber(entry.i);
    if (at !== undefined && at >= 0 && at < arr.length) arr.length = at;
    for (const item of items) arr.push(item); // not push(...items): a huge push would overflow the argument limit
    container[last] = arr;
  }
  return undefined;
}

const child = (v: unknown, key: PathKey): unknown => (Array.isArray(v) ? v[Number(key)] : isRecord(v) ? v[String(key)] : undefined);

// ---- the snapshot as a session ----

function toSession(file: string, data: JsonRecord, unknownTypes: Record<string, number>): ParsedSession {
  const requests = (asArray(data.requests) ?? []).map(asRecord).filter((r): r is JsonRecord => r !== undefined);
  const events: ParsedEvent[] = [];
  let model: string | undefined;
  let firstPrompt: string | undefined;
  let first: number | undefined;
  let last: number | undefined;
  requests.forEach((req, i) => {
    const rid = asNonEmptyString(req.requestId) ?? `request-${i}`;
    const reqModel = asNonEmptyString(req.modelId);
    model = reqModel ?? model;
    const prompt = messageText(req.message);
    firstPrompt ??= prompt.trim() || undefined;
    for (const t of [asEpochMs(req.timestamp), asEpochMs(asRecord(req.modelState)?.completedAt)]) {
      if (t !== undefined) [first, last] = [Math.min(first ?? t, t), Math.max(last ?? t, t)];
    }
    events.push({ key: `${rid}:user`, kind: 'user', text: prompt, at: asEpochMs(req.timestamp), runKey: rid, rawType: 'request' });
    for (const e of responseEvents(asArray(req.response) ?? [], rid, reqModel, unknownTypes)) events.push(e);
    const outcome = outcomeEvent(req, rid);
    if (outcome) events.push(outcome);
  });
  const firstRid = asNonEmptyString(requests[0]?.requestId);
  const base = fileStem(file);
  return {
    source: 'vscode-chat',
    externalId: asNonEmptyString(data.sessionId) ?? (firstRid ? `${base}#${firstRid}` : base),
    title: asNonEmptyString(data.customTitle) ?? (firstPrompt ? oneLine(firstPrompt, 200) : undefined),
    model,
    startedAt: asEpochMs(data.creationDate) ?? first,
    updatedAt: asEpochMs(data.lastMessageDate) ?? last,
    events,
  };
}

function messageText(message: unknown): string {
  const rec = asRecord(message);
  return asString(message) ?? asString(rec?.text) ?? (asArray(rec?.parts) ?? []).map((p) => asString(asRecord(p)?.text) ?? '').join('');
}

/** Canceled and failed turns stay visible: a 'system' event saying what the user saw. */
function outcomeEvent(req: JsonRecord, rid: string): ParsedEvent | undefined {
  const state = asRecord(req.modelState);
  const at = asEpochMs(state?.completedAt);
  const error = asRecord(asRecord(req.result)?.errorDetails);
  if (error) {
    const message = asNonEmptyString(error.message) ?? 'The request failed';
    const code = asNonEmptyString(error.code);
    const text = code && code.toLowerCase() !== message.toLowerCase() ? `${message} (${code})` : message;
    return { key: `${rid}:error`, kind: 'system', text, at, runKey: rid, rawType: 'errorDetails' };
  }
  // modelState.value (ResponseModelState): 2 = cancelled, 3 = failed; isCanceled is the pre-modelState flag.
  const value = asNumber(state?.value);
  const outcome = req.isCanceled === true || value === 2 ? 'canceled' : value === 3 ? 'failed' : undefined;
  return outcome && { key: `${rid}:${outcome}`, kind: 'system', text: `Request ${outcome}`, at, runKey: rid, rawType: outcome };
}

// ---- response parts ----

type Out =
  | { type: 'none' }
  | { type: 'run'; run: 'assistant' | 'reasoning'; text: string }
  | { type: 'events'; events: Omit<ParsedEvent, 'runKey'>[] };

const SYSTEM_KINDS = new Set([
  'progressMessage', 'progressTask', 'progressTaskSerialized', 'progressTaskResult', 'warning', 'info', 'systemNotification',
  'command', 'confirmation', 'elicitation', 'elicitation2', 'elicitationSerialized', 'questionCarousel', 'treeData',
  'multiDiffData', 'extensions', 'pullRequest', 'clearToPreviousToolInvocation', 'hook', 'workspaceEdit', 'externalEdit',
  'externalEdits', 'autoModeResolution', 'move', 'usedContext', 'reference', 'codeCitation', 'disabledClaudeHooks',
]);
const SILENT_KINDS = new Set(['undoStop', 'codeblockUri']);

function responseEvents(parts: unknown[], rid: string, model: string | undefined, unknownTypes: Record<string, number>): ParsedEvent[] {
  const folded = foldPreparations(parts);
  const events: ParsedEvent[] = [];
  let run: { run: 'assistant' | 'reasoning'; index: number; text: string; rawType: string } | undefined;
  const flush = (): void => {
    if (run) events.push({ key: `${rid}:resp:${run.index}`, kind: run.run, text: run.text, runKey: rid, model, rawType: run.rawType });
    run = undefined;
  };
  parts.forEach((part, i) => {
    if (part === undefined || part === null || folded.has(i)) return;
    const out = describePart(part, `${rid}:resp:${i}`, model, unknownTypes);
    if (out.type === 'none') return;
    if (out.type === 'run') {
      if (run?.run !== out.run) {
        flush();
        run = { run: out.run, index: i, text: '', rawType: asString(asRecord(part)?.kind) ?? 'markdownContent' };
      }
      run.text += out.text;
      return;
    }
    flush();
    for (const e of out.events) events.push({ ...e, runKey: rid });
  });
  flush();
  return events;
}

/** Indexes of `prepareToolInvocation` parts that a later invocation of the same tool accounts for. */
function foldPreparations(parts: unknown[]): Set<number> {
  const folded = new Set<number>();
  const claimed = new Set<number>();
  parts.forEach((p, i) => {
    const rec = asRecord(p);
    if (rec?.kind !== 'prepareToolInvocation') return;
    const j = parts.findIndex((q, k) => k > i && !claimed.has(k) && isInvocation(q) && asRecord(q)?.toolId === rec.toolName);
    if (j >= 0) {
      claimed.add(j);
      folded.add(i);
    }
  });
  return folded;
}

const INVOCATION_KINDS = new Set(['toolInvocationSerialized', 'toolInvocation']);
const isInvocation = (p: unknown): boolean => INVOCATION_KINDS.has(asString(asRecord(p)?.kind) ?? '');
const EDIT_KINDS = new Set(['textEditGroup', 'notebookEditGroup', 'textEdit', 'notebookEdit']);

function describePart(part: unknown, key: string, model: string | undefined, unknownTypes: Record<string, number>): Out {
  const p = asRecord(part);
  const kind = p ? asString(p.kind) : undefined;
  if (p && (kind === undefined || kind === 'markdownContent' || kind === 'markdownVuln')) {
    const text = markdown(kind === undefined ? p : p.content);
    if (kind !== undefined || typeof p.value === 'string') return text ? { type: 'run', run: 'assistant', text } : { type: 'none' };
  }
  if (!p || kind === undefined) {
    const rawType = p ? '(no kind)' : typeof part;
    bump(unknownTypes, rawType);
    return { type: 'events', events: [{ key, kind: 'unknown', text: compactJson(part), rawType }] };
  }
  if (kind === 'inlineReference') return { type: 'run', run: 'assistant', text: referenceLabel(p) };
  if (kind === 'thinking') {
    const v = p.value;
    const text = Array.isArray(v) ? v.filter((s) => typeof s === 'string').join('') : (asString(v) ?? '');
    return text.trim() ? { type: 'run', run: 'reasoning', text } : { type: 'none' };
  }
  if (INVOCATION_KINDS.has(kind)) return { type: 'events', events: toolEvents(p, key, model) };
  if (kind === 'prepareToolInvocation') return system(key, kind, `Preparing tool call: ${asString(p.toolName) ?? 'unknown tool'}`);
  if (EDIT_KINDS.has(kind)) return { type: 'events', events: [{ key, kind: 'assistant', text: editText(p), model, rawType: kind }] };
  if (SILENT_KINDS.has(kind)) return { type: 'none' };
  if (kind === 'mcpServersStarting') {
    const ids = (asArray(p.didStartServerIds) ?? []).filter((s) => typeof s === 'string');
    return ids.length ? system(key, kind, `MCP servers starting: ${ids.join(', ')}`) : { type: 'none' };
  }
  if (SYSTEM_KINDS.has(kind)) return system(key, kind, systemText(p));
  bump(unknownTypes, kind);
  return { type: 'events', events: [{ key, kind: 'unknown', text: compactJson(p), rawType: kind }] };
}

const system = (key: string, rawType: string, text: string): Out => ({ type: 'events', events: [{ key, kind: 'system', text, rawType }] });

/** IMarkdownString `{value}` or a plain string; both occur for the same field across versions. */
const markdown = (v: unknown): string => asString(v) ?? asString(asRecord(v)?.value) ?? '';

function uriText(v: unknown): string {
  if (typeof v === 'string') return v;
  const u = asRecord(v);
  if (!u) return '';
  if (u.uri !== undefined) {
    const line = asNumber(asRecord(u.range)?.startLineNumber);
    return uriText(u.uri) + (line !== undefined ? `#L${line}` : '');
  }
  const scheme = asString(u.scheme);
  const path = asString(u.path) ?? '';
  if (scheme === 'file') return asString(u.fsPath) ?? path;
  return asString(u.external) ?? (scheme ? `${scheme}://${asString(u.authority) ?? ''}${path}` : path);
}

/** What VS Code shows in place of an inline reference: its name, or the file's base name. */
function referenceLabel(p: JsonRecord): string {
  const ref = asRecord(p.inlineReference);
  const name = asNonEmptyString(p.name) ?? (ref && !('scheme' in ref) && !('uri' in ref) ? asNonEmptyString(ref.name) : undefined);
  if (name) return name;
  const full = uriText(ref ?? p.inlineReference).replace(/#L\d+$/, '');
  return full.split(/[\\/]/).pop() || full;
}

function systemText(p: JsonRecord): string {
  const pieces = [markdown(p.title), markdown(p.message), markdown(p.content), markdown(p.subtitle), asString(asRecord(p.command)?.title),
    asString(p.stopReason), asString(p.systemMessage), asString(asRecord(p.multiDiffData)?.title), asString(asRecord(p.treeData)?.label),
    asString(p.description)].filter((s): s is string => !!s && s.trim() !== '');
  const list = asArray(p.extensions) ?? asArray(p.questions)?.map((q) => asString(asRecord(q)?.title));
  if (list) pieces.push(list.filter((s) => typeof s === 'string').join(', '));
  const state = asString(p.state);
  if (state) pieces.push(`(${state})`);
  return pieces.length ? pieces.join('\n') : compactJson(p);
}

function editText(p: JsonRecord): string {
  const groups = asArray(p.edits) ?? [];
  // textEditGroup nests edits per streamed chunk (TextEdit[][]); textEdit is flat.
  const edits = groups.flatMap((g) => (Array.isArray(g) ? g : [g]));
  const inserted = edits.map((e) => asString(asRecord(e)?.text)).filter((s): s is string => !!s);
  const header = `Edited ${uriText(p.uri) || 'a file'} (${edits.length} edit${edits.length === 1 ? '' : 's'})`;
  return inserted.length ? `${header}\n${inserted.join('\n')}` : header;
}

// ---- tool invocations ----

function toolEvents(p: JsonRecord, key: string, model: string | undefined): Omit<ParsedEvent, 'runKey'>[] {
  const toolName = asNonEmptyString(p.toolId) ?? 'unknown_tool';
  const callId = asNonEmptyString(p.toolCallId);
  const data = asRecord(p.toolSpecificData);
  const line = asRecord(data?.commandLine);
  const command = data?.kind !== 'terminal' ? undefined
    : asNonEmptyString(line?.toolEdited) ?? asNonEmptyString(line?.userEdited) ?? asNonEmptyString(line?.original) ?? asNonEmptyString(data.command);
  const text = [markdown(p.invocationMessage), command].filter((s) => !!s?.trim()).join('\n') || toolName;
  const toolInputValue = toolInput(p, data, command);
  const call = { key, kind: 'tool_call' as const, text, toolName, callId, toolInput: toolInputValue, model, rawType: asString(p.kind) };
  const output = resultText(p.resultDetails, data);
  const past = markdown(p.pastTenseMessage).trim() || undefined;
  // isConfirmed: a boolean before VS Code 1.104, then ConfirmedReason whose type 0 = denied, 5 = skipped.
  const confirmType = asNumber(asRecord(p.isConfirmed)?.type);
  const denied = p.isConfirmed === false || confirmType === 0 || confirmType === 5;
  if (output === undefined && !past && !denied && p.isComplete === false) return [call];
  const error = p.resultError;
  const exitCode = asNumber(asRecord(data?.terminalCommandState)?.exitCode);
  const isError = asRecord(p.resultDetails)?.isError === true || (error !== undefined && error !== null && error !== false)
    || (exitCode !== undefined && exitCode !== 0) || denied;
  const pieces = [denied ? 'Denied by the user' : undefined, output ?? past ?? `(${toolName}: no output recorded)`,
    asString(error) ?? asString(asRecord(error)?.message)];
  const result = pieces.filter((s) => !!s).join('\n');
  return [call, { key: `${key}:result`, kind: 'tool_result', text: result, toolName, callId, isError, rawType: 'toolResult' }];
}

function toolInput(p: JsonRecord, data: JsonRecord | undefined, command: string | undefined): unknown {
  if (data?.kind === 'input') return data.rawInput;
  if (data?.kind === 'terminal') return { command, cwd: data.cwd === undefined ? undefined : uriText(data.cwd) };
  if (data?.kind === 'simpleToolInvocation') return data.input;
  if (data?.kind === 'subagent') return { description: data.description, prompt: data.prompt, agentName: data.agentName };
  if (data) return data;
  const input = asRecord(p.resultDetails)?.input;
  if (typeof input !== 'string') return input;
  const parsed = tryParseJson(input);
  return parsed.ok ? parsed.value : input;
}

/** The output the user could expand under the tool call, in whichever shape this version stored it. */
function resultText(details: unknown, data: JsonRecord | undefined): string | undefined {
  const pieces = (asArray(details) ?? []).map(uriText).filter((s) => s !== '');
  const output = asRecord(details)?.output;
  for (const o of Array.isArray(output) ? output : output !== undefined ? [output] : []) {
    const item = asRecord(o);
    const value = asString(item?.value);
    if (value !== undefined && item?.isText !== false) pieces.push(value);
    else if (item?.uri !== undefined) pieces.push(uriText(item.uri));
    else if (item) pieces.push(`[${asString(item.mimeType) ?? 'binary'} output]`);
  }
  const terminalOut = asString(asRecord(data?.terminalCommandOutput)?.text);
  if (terminalOut !== undefined) pieces.push(terminalOut);
  if (data?.kind === 'subagent' && typeof data.result === 'string') pieces.push(data.result);
  if (data?.kind === 'simpleToolInvocation' && typeof data.output === 'string') pieces.push(data.output);
  return pieces.length ? pieces.join('\n') : undefined;
}

const fileStem = (file: string): string => (file.split(/[\\/]/).pop() ?? file).replace(/\.jsonl?$/i, '');

function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
