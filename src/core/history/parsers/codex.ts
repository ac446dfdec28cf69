import type { EventKind, ParsedEvent, ParsedSession, ParseProblem, ParseResult, TranscriptParser } from '../parsedSession';
import { asEpochMs as time, asString as str, forEachJsonLine, isRecord as isRec, type JsonRecord as Rec } from './json';

/**
 * Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`.
 *
 * Two shapes, told apart line by line so a file that mixes them still reads:
 * - current: `{timestamp, type, payload}` with type session_meta / turn_context /
 *   response_item / event_msg / compacted;
 * - older: the response items themselves (`{type:"message",role,content}`, `function_call`…),
 *   after a header line `{id, timestamp, instructions}`, with `{record_type:"state"}` lines
 *   in between.
 *
 * Source of truth: the response items. Codex writes the same words twice, once as the
 * response item the model saw and replays on resume, once as an `event_msg`
 * (user_message / agent_message / agent_reasoning) for its own UI. The response items are
 * the only ones that hold tool calls and outputs too, and the only ones the older shape has,
 * so the duplicating event_msg kinds are skipped rather than merged (merging would make an
 * earlier event depend on a later line, and a grown file must only ever add events).
 *
 * Lines carry no ids, so keys are positions (`line:<n>`); rollouts are append-only.
 */

type Draft = Omit<ParsedEvent, 'key' | 'runKey' | 'at'> & { prompt?: boolean };

const WRAPPED = new Set(['session_meta', 'turn_context', 'response_item', 'event_msg', 'compacted']);
/** event_msg kinds that repeat a response item, or are metrics and lifecycle with no words in them. */
const EVENTS_SKIPPED = new Set([
  'user_message',
  'agent_message',
  'agent_reasoning',
  'agent_reasoning_raw_content',
  'agent_reasoning_section_break',
  'token_count',
  'task_started',
  'task_complete',
  'context_compacted',
]);
const EVENTS_SYSTEM = new Set(['turn_aborted', 'error', 'stream_error', 'warning', 'background_event']);
/**
 * Codex sends its environment and the project's AGENTS.md as user-role messages; they are
 * context, not a request, so they are 'system' and start no run.
 */
const META_USER = [/^<environment_context>/, /^<user_instructions>/, /^<INSTRUCTIONS>/, /^# AGENTS\.md instructions for /, /^<turn_aborted>/];

export const parseCodex: TranscriptParser = (file, text) => new CodexReader(file).read(text);

class CodexReader {
  private readonly problems: ParseProblem[] = [];
  private readonly unknownTypes: Record<string, number> = {};
  private readonly events: ParsedEvent[] = [];
  private id?: string;
  private workspace?: string;
  private model?: string;
  private startedAt?: number;
  private updatedAt?: number;
  private title?: string;
  private run?: string;

  constructor(private readonly file: string) {}

  read(text: string): ParseResult {
    forEachJsonLine(this.file, text, this.problems, (rec, n) => this.record(rec, n));
    return { sessions: this.session(), problems: this.problems, unknownTypes: this.unknownTypes };
  }

  private record(rec: Rec, n: number): void {
    const at = time(rec.timestamp);
    if (at !== undefined) {
      this.startedAt = Math.min(this.startedAt ?? at, at);
      this.updatedAt = Math.max(this.updatedAt ?? at, at);
    }
    const type = str(rec.type);
    const payload = isRec(rec.payload) ? rec.payload : {};
    if (type === undefined) {
      if (rec.record_type !== undefined) return; // older shape's state snapshot
      if (typeof rec.id === 'string') {
        this.id ??= rec.id; // older shape's header line
        return;
      }
      return this.emit(n, at, [this.unknown('(untyped)', rec)]);
    }
    if (!WRAPPED.has(type) && 'payload' in rec) return this.emit(n, at, [this.unknown(type, rec)]);
    switch (type) {
      case 'session_meta':
        this.id ??= str(payload.id);
        this.workspace ??= str(payload.cwd);
        return;
      case 'turn_context':
        this.workspace ??= str(payload.cwd);
        this.model = str(payload.model) ?? this.model;
        return;
      case 'compacted':
        return this.emit(n, at, [{ kind: 'summary', text: str(payload.message) ?? JSON.stringify(payload), rawType: 'compacted' }]);
      case 'event_msg':
        return this.emit(n, at, this.eventDrafts(payload, rec));
      case 'response_item':
        return this.emit(n, at, this.itemDrafts(payload, rec, 'response_item/'));
      default:
        return this.emit(n, at, this.itemDrafts(rec, rec, ''));
    }
  }

  private eventDrafts(p: Rec, rec: Rec): Draft[] {
    const type = str(p.type) ?? '(untyped)';
    if (EVENTS_SKIPPED.has(type)) return [];
    if (EVENTS_SYSTEM.has(type)) {
      const words = str(p.message) ?? str(p.reason);
      return [{ kind: 'system', text: words ? `${type}: ${words}` : JSON.stringify(p), rawType: type }];
    }
    return [this.unknown(`event_msg/${type}`, rec)];
  }

  /** `prefix` names where an unknown item was found, so the two shapes count apart. */
  private itemDrafts(p: Rec, rec: Rec, prefix: string): Draft[] {
    const type = str(p.type) ?? '(untyped)';
    const model = this.model;
    switch (type) {
      case 'message':
        return this.messageDrafts(p, rec, prefix);
      case 'reasoning': {
        // Raw reasoning when the provider gives it, else the summary Codex shows; the encrypted blob is unreadable.
        const text = joinTexts(p.content) || joinTexts(p.summary);
        return text ? [{ kind: 'reasoning', text, rawType: type, model }] : [];
      }
      case 'function_call':
      case 'custom_tool_call': {
        const input = type === 'function_call' ? parseMaybe(p.arguments) : p.input;
        return [{ kind: 'tool_call', text: renderInput(input), toolName: str(p.name), callId: str(p.call_id), toolInput: input, rawType: type, model }];
      }
      case 'local_shell_call': {
        const action = isRec(p.action) ? p.action : {};
        return [{ kind: 'tool_call', text: renderInput(action), toolName: 'local_shell', callId: str(p.call_id) ?? str(p.id), toolInput: action, rawType: type, model }];
      }
      case 'web_search_call': {
        const action = isRec(p.action) ? p.action : {};
        const text = str(action.query) ?? JSON.stringify(action);
        return [{ kind: 'tool_call', text, toolName: 'web_search', callId: str(p.id), toolInput: action, rawType: type, model }];
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
        return [{ kind: 'tool_result', ...toolOutput(p.output), callId: str(p.call_id), rawType: type }];
      case 'ghost_snapshot':
        return []; // a git snapshot for /undo: bookkeeping
      default:
        return [this.unknown(`${prefix}${type}`, rec)];
    }
  }

  private messageDrafts(p: Rec, rec: Rec, prefix: string): Draft[] {
    const role = str(p.role) ?? '';
    const texts: string[] = [];
    const drafts: Draft[] = [];
    const parts: unknown[] = typeof p.content === 'string' ? [{ type: 'input_text', text: p.content }] : Array.isArray(p.content) ? p.content : [];
    for (const part of parts) {
      const t = isRec(part) ? str(part.type) : undefined;
      if (isRec(part) && (t === 'input_text' || t === 'output_text' || t === 'text')) texts.push(str(part.text) ?? '');
      else if (isRec(part) && t === 'refusal') texts.push(str(part.refusal) ?? '');
      else if (isRec(part) && t === 'input_image') texts.push(image(part));
      else drafts.push(this.unknown(`${prefix}message/${t ?? '(untyped)'}`, part));
    }
    const text = texts.join('\n');
    let kind: EventKind;
    if (role === 'assistant') kind = 'assistant';
    else if (role === 'user') kind = META_USER.some((re) => re.test(text.trimStart())) ? 'system' : 'user';
    else if (role === 'developer' || role === 'system') kind = 'system';
    else return [this.unknown(`${prefix}message(role=${role || 'none'})`, rec)];
    if (!texts.length && drafts.length) return drafts;
    const model = kind === 'assistant' ? this.model : undefined;
    return [{ kind, text, rawType: 'message', model, prompt: kind === 'user' && text.trim() !== '' }, ...drafts];
  }

  private emit(n: number, at: number | undefined, drafts: Draft[]): void {
    drafts.forEach(({ prompt, ...fields }, i) => {
      const key = i === 0 ? `line:${n}` : `line:${n}:${i}`;
      if (prompt) {
        this.run = key;
        this.title ??= promptTitle(fields.text);
      }
      this.events.push({ key, ...fields, at, runKey: this.run });
    });
  }

  private unknown(type: string, value: unknown): Draft {
    this.unknownTypes[type] = (this.unknownTypes[type] ?? 0) + 1;
    return { kind: 'unknown', text: JSON.stringify(value) ?? String(value), rawType: type };
  }

  private session(): ParsedSession[] {
    if (!this.events.length) return [];
    const name = (this.file.split(/[\\/]/).at(-1) ?? this.file).replace(/\.jsonl$/i, '');
    const fromName = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(name)?.[1];
    return [
      {
        source: 'codex',
        externalId: this.id ?? fromName ?? name,
        title: this.title,
        workspace: this.workspace,
        model: this.model,
        startedAt: this.startedAt,
        updatedAt: this.updatedAt,
        events: this.events,
      },
    ];
  }
}

/**
 * A shell call's output is itself JSON (`{output, metadata: {exit_code}}`); the words are the
 * output, and a non-zero exit is the failure. Anything else is kept as written.
 */
function toolOutput(output: unknown): { text: string; isError: boolean } {
  if (Array.isArray(output)) return { text: joinTexts(output), isError: false };
  if (isRec(output)) {
    const text = typeof output.content === 'string' ? output.content : JSON.stringify(output);
    return { text, isError: output.success === false };
  }
  if (typeof output !== 'string') return { text: JSON.stringify(output) ?? '', isError: false };
  const parsed = parseMaybe(output);
  if (isRec(parsed) && typeof parsed.output === 'string') {
    const exit = isRec(parsed.metadata) ? parsed.metadata.exit_code : undefined;
    return { text: parsed.output, isError: typeof exit === 'number' && exit !== 0 };
  }
  return { text: output, isError: false };
}

/** Texts of content parts (reasoning summaries, output items); other parts stay as JSON. */
function joinTexts(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return '';
  return v
    .map((p) => {
      if (!isRec(p)) return typeof p === 'string' ? p : JSON.stringify(p);
      if (typeof p.text === 'string') return p.text;
      return p.type === 'input_image' ? image(p) : JSON.stringify(p);
    })
    .filter((s) => s)
    .join('\n\n');
}

/** A data: URL is not text anyone searches; say an image was there and how big it was. */
function image(p: Rec): string {
  const url = str(p.image_url) ?? '';
  const media = /^data:([^;,]+)/.exec(url)?.[1];
  return media ? `[image ${media}, ${url.length} chars]` : url ? `[image ${url}]` : '[image]';
}

/** The command a person would have typed, when the input is a shell call; else the input as JSON. */
function renderInput(input: unknown): string {
  if (typeof input === 'string') return input;
  const command = isRec(input) ? input.command : undefined;
  if (typeof command === 'string') return command;
  if (Array.isArray(command) && command.every((c) => typeof c === 'string')) {
    const [shell, flag, script] = command;
    if (command.length === 3 && /(^|\/)(ba|z)?sh$/.test(shell ?? '') && /^-l?c$/.test(flag ?? '')) return script ?? '';
    return command.join(' ');
  }
  return JSON.stringify(input) ?? '';
}

function parseMaybe(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

function promptTitle(text: string): string | undefined {
  const plain = text.replace(/\s+/g, ' ').trim();
  const chars = [...plain];
  return !plain ? undefined : chars.length > 80 ? chars.slice(0, 79).join('') + '…' : plain;
}
