import type { EventKind, ParsedEvent, ParsedSession, ParseProblem, ParseResult, TranscriptParser } from '../parsedSession';
import { asEpochMs as time, asString as str, forEachJsonLine, isRecord as isRec, type JsonRecord as Rec } from './json';

/**
 * Claude Code transcripts: `~/.claude/projects/<slug>/<session>.jsonl`, one record per line,
 * linked into a tree by `parentUuid`. Sub-agents ("sidechains") live in
 * `<session>/subagents/agent-<id>.jsonl` (2.1), `<slug>/agent-<id>.jsonl` (2.0) or, in 1.0.x,
 * inline in the main file with `isSidechain: true`; all three become a session of their own
 * that names the main session as its parent, so the main session's runs and prompts are
 * the person's, not a sub-agent's.
 *
 * Keys are the line's `uuid` (else `line:<n>`), so they survive re-imports and a grown file
 * only ever adds keys; nothing a later line says changes an earlier event.
 */

type Draft = Omit<ParsedEvent, 'key' | 'parentKey' | 'runKey' | 'at'> & { prompt?: boolean };

interface Group {
  name: string;
  events: ParsedEvent[];
  currentRun?: string;
  workspace?: string;
  model?: string;
  startedAt?: number;
  updatedAt?: number;
  prompt?: string;
  summaryTitle?: string;
  customTitle?: string;
}

/**
 * Wrappers Claude Code itself puts into user-role messages. A message made only of these was
 * not typed by the person, so it is 'system' and starts no run. `<command-name>` is missing on
 * purpose: it records a slash command the person ran (`/init`), and everything the command
 * caused (its expanded, `isMeta` prompt and the work after it) belongs to that request.
 */
const META_BLOCK = /<(system-reminder|local-command-stdout|local-command-stderr|local-command-caveat|bash-stdout|bash-stderr)>[\s\S]*?<\/\1>/g;
const INTERRUPTED = /^\[Request interrupted by user[^\]]*\]$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * Bookkeeping, not conversation: `progress` is transient UI state (hook runs, partial shell
 * output, a sub-agent's messages that its own file holds whole), `file-history-snapshot`
 * backs files up for /rewind, `agent-name` repeats `custom-title`. Their uuids stay usable as
 * parents: a child of a skipped record hangs off the skipped record's own parent.
 */
const SKIPPED = new Set(['progress', 'file-history-snapshot', 'agent-name']);

export const parseClaudeCode: TranscriptParser = (file, text) => new ClaudeReader(file).read(text);

class ClaudeReader {
  private readonly problems: ParseProblem[] = [];
  private readonly unknownTypes: Record<string, number> = {};
  private readonly groups = new Map<string, Group>();
  private readonly main: Group = this.group('');
  /** uuid of a record that produced no event → the key its children attach to instead. */
  private readonly alias = new Map<string, string | undefined>();
  private readonly runOf = new Map<string, string | undefined>();
  /** In-file sidechains (1.0.x): which sidechain group each uuid went to, so its children follow. */
  private readonly uuidGroup = new Map<string, Group>();
  private readonly stem: string;
  private readonly agentFile: boolean;
  private readonly pathParent?: string;
  private firstSessionId?: string;

  constructor(private readonly file: string) {
    const parts = file.split(/[\\/]/);
    this.stem = (parts.at(-1) ?? '').replace(/\.jsonl$/i, '');
    this.agentFile = this.stem.startsWith('agent-');
    if (this.agentFile && parts.at(-2) === 'subagents') this.pathParent = parts.at(-3);
  }

  read(text: string): ParseResult {
    forEachJsonLine(this.file, text, this.problems, (rec, n) => this.record(rec, n));
    return { sessions: this.sessions(), problems: this.problems, unknownTypes: this.unknownTypes };
  }

  private record(rec: Rec, n: number): void {
    const type = str(rec.type) ?? '';
    const g = this.groupOf(rec);
    this.firstSessionId ??= str(rec.sessionId);
    g.workspace ??= str(rec.cwd);
    const at = time(rec.timestamp);
    if (at !== undefined) {
      g.startedAt = Math.min(g.startedAt ?? at, at);
      g.updatedAt = Math.max(g.updatedAt ?? at, at);
    }
    const parent = str(rec.parentUuid);
    switch (type) {
      case 'user':
        return this.emit(g, rec, n, this.userDrafts(rec), parent);
      case 'assistant':
        return this.emit(g, rec, n, this.assistantDrafts(g, rec), parent);
      case 'summary': {
        const summary = str(rec.summary) ?? '';
        if (summary) g.summaryTitle = summary;
        const leaf = str(rec.leafUuid);
        return this.emit(g, rec, n, [{ kind: 'summary', text: summary, rawType: 'summary' }], undefined, leaf && `summary:${leaf}`);
      }
      case 'custom-title':
        g.customTitle = str(rec.customTitle) ?? g.customTitle;
        return;
      case 'ai-title':
        g.summaryTitle = str(rec.aiTitle) ?? g.summaryTitle;
        return;
      case 'queue-operation': {
        // Only a queued prompt says anything; a bare enqueue/dequeue is UI state. The prompt
        // reappears as a user message once dequeued, so 'system' keeps it out of the counts.
        const content = rec.content === undefined ? '' : flatten(rec.content);
        const drafts: Draft[] = content ? [{ kind: 'system', text: `${str(rec.operation) ?? 'queue'}: ${content}`, rawType: 'queue-operation' }] : [];
        return this.emit(g, rec, n, drafts, undefined);
      }
      case 'system': {
        const subtype = str(rec.subtype);
        const draft: Draft = { kind: 'system', text: str(rec.content) || JSON.stringify(rec), rawType: subtype ? `system/${subtype}` : 'system' };
        // A compact boundary starts a new root but names what it continues.
        return this.emit(g, rec, n, [draft], parent ?? str(rec.logicalParentUuid));
      }
      default:
        if (SKIPPED.has(type)) return this.emit(g, rec, n, [], parent);
        return this.emit(g, rec, n, [this.unknown(type || '(untyped)', rec)], parent);
    }
  }

  private userDrafts(rec: Rec): Draft[] {
    const parts = contentParts(rec);
    if (!parts) return [this.unknown('user(no content)', rec)];
    const single = parts.filter((p) => isRec(p) && isToolResult(str(p.type))).length === 1;
    const drafts: Draft[] = [];
    let texts: string[] = [];
    const flush = (): void => {
      if (texts.length) drafts.push(classifyUserText(rec, texts.join('\n\n')));
      texts = [];
    };
    for (const p of parts) {
      const type = isRec(p) ? str(p.type) : undefined;
      if (isRec(p) && type === 'text') texts.push(str(p.text) ?? '');
      else if (isRec(p) && (type === 'image' || type === 'document')) texts.push(attachment(p));
      else if (isRec(p) && isToolResult(type)) {
        flush();
        drafts.push(toolResult(p, single ? rec.toolUseResult : undefined));
      } else {
        flush();
        drafts.push(this.unknown(`user/${type ?? '(untyped)'}`, p));
      }
    }
    flush();
    return drafts;
  }

  private assistantDrafts(g: Group, rec: Rec): Draft[] {
    const parts = contentParts(rec);
    if (!parts) return [this.unknown('assistant(no content)', rec)];
    const message = isRec(rec.message) ? rec.message : {};
    const model = str(message.model);
    if (model && model !== '<synthetic>') g.model = model;
    // An API error Claude Code wrote in the assistant's place is not something the model said.
    const textKind: EventKind = rec.isApiErrorMessage === true ? 'system' : 'assistant';
    const drafts: Draft[] = [];
    for (const p of parts) {
      const type = isRec(p) ? str(p.type) : undefined;
      if (!isRec(p)) drafts.push(this.unknown('assistant/(untyped)', p));
      else if (type === 'text') {
        const text = str(p.text) ?? '';
        if (text.trim()) drafts.push({ kind: textKind, text, rawType: type, model });
      } else if (type === 'thinking') {
        const text = str(p.thinking) ?? '';
        if (text.trim()) drafts.push({ kind: 'reasoning', text, rawType: type, model });
      } else if (type === 'redacted_thinking') {
        continue; // encrypted: nothing a person could read or search
      } else if (type === 'tool_use' || type === 'server_tool_use' || type === 'mcp_tool_use') {
        drafts.push({ kind: 'tool_call', text: renderInput(p.input), toolName: str(p.name), callId: str(p.id), toolInput: p.input, rawType: type, model });
      } else if (isToolResult(type)) drafts.push(toolResult(p, undefined));
      else drafts.push(this.unknown(`assistant/${type ?? '(untyped)'}`, p));
    }
    return drafts;
  }

  /**
   * One line's events. When a line holds several blocks they chain in order and the last one
   * takes the line's uuid, so the line's children hang off its last block, as they should.
   */
  private emit(g: Group, rec: Rec, n: number, drafts: Draft[], parentId: string | undefined, baseKey?: string): void {
    const uuid = str(rec.uuid);
    let parent = this.resolve(parentId);
    if (!drafts.length) {
      if (uuid) this.alias.set(uuid, parent);
      return;
    }
    const base = baseKey || uuid || `line:${n}`;
    const at = time(rec.timestamp);
    drafts.forEach(({ prompt, ...fields }, i) => {
      const key = i === drafts.length - 1 ? base : `${base}:${i}`;
      // A run follows the tree, not the file: a retried answer belongs to the prompt it answers.
      const runKey = prompt ? key : parent !== undefined && this.runOf.has(parent) ? this.runOf.get(parent) : g.currentRun;
      g.events.push({ key, ...fields, at, parentKey: parent, runKey });
      this.runOf.set(key, runKey);
      g.currentRun = runKey;
      if (prompt && g.prompt === undefined) g.prompt = promptTitle(fields.text);
      parent = key;
    });
  }

  private resolve(id: string | undefined): string | undefined {
    for (let hops = 0; id !== undefined && this.alias.has(id) && hops < 10_000; hops++) id = this.alias.get(id);
    return id;
  }

  private groupOf(rec: Rec): Group {
    if (this.agentFile || rec.isSidechain !== true) return this.main;
    const uuid = str(rec.uuid);
    const agent = str(rec.agentId);
    const g = agent ? this.group(`agent-${agent}`) : (this.uuidGroup.get(str(rec.parentUuid) ?? '') ?? this.group(`sidechain-${uuid ?? 'orphan'}`));
    if (uuid) this.uuidGroup.set(uuid, g);
    return g;
  }

  private group(name: string): Group {
    const g = this.groups.get(name) ?? { name, events: [] };
    this.groups.set(name, g);
    return g;
  }

  private unknown(type: string, value: unknown): Draft {
    this.unknownTypes[type] = (this.unknownTypes[type] ?? 0) + 1;
    return { kind: 'unknown', text: JSON.stringify(value) ?? String(value), rawType: type };
  }

  /**
   * The file name is the session Claude Code writes to; a resumed session's file also holds
   * copies of earlier lines that still carry the old `sessionId`, so lines cannot name it.
   */
  private sessions(): ParsedSession[] {
    let mainId = UUID.test(this.stem) ? this.stem : (this.firstSessionId ?? this.stem);
    let mainParent: string | undefined;
    if (this.agentFile) {
      mainParent = this.pathParent ?? this.firstSessionId;
      mainId = mainParent ? `${mainParent}:${this.stem}` : this.stem;
    }
    const out: ParsedSession[] = [];
    for (const g of this.groups.values()) {
      if (!g.events.length) continue;
      const sub = g !== this.main;
      out.push({
        source: 'claude-code',
        externalId: sub ? `${mainId}:${g.name}` : mainId,
        title: g.customTitle ?? g.summaryTitle ?? g.prompt,
        workspace: g.workspace,
        model: g.model,
        startedAt: g.startedAt,
        updatedAt: g.updatedAt,
        parentExternalId: sub ? mainId : mainParent,
        events: g.events,
      });
    }
    return out;
  }
}

function classifyUserText(rec: Rec, text: string): Draft {
  if (rec.isCompactSummary === true) return { kind: 'summary', text, rawType: 'compact-summary' };
  const trimmed = text.trim();
  if (rec.isMeta === true || !trimmed.replace(META_BLOCK, '').trim() || INTERRUPTED.test(trimmed)) return { kind: 'system', text, rawType: 'text' };
  return { kind: 'user', text, rawType: 'text', prompt: true };
}

function toolResult(p: Rec, toolUseResult: unknown): Draft {
  let text = flatten(p.content);
  // Claude Code keeps the tool's own result beside what the model was shown; for a shell
  // command its stdout/stderr can be fuller than the (possibly shortened) content.
  const rich = typeof toolUseResult === 'string' ? toolUseResult : isRec(toolUseResult) ? shellOutput(toolUseResult) : undefined;
  if (rich !== undefined && rich.length > text.length) text = rich;
  const errorContent = isRec(p.content) && (str(p.content.type) ?? '').endsWith('_error');
  return { kind: 'tool_result', text, callId: str(p.tool_use_id), isError: p.is_error === true || errorContent, rawType: str(p.type) };
}

function shellOutput(r: Rec): string | undefined {
  const streams = [str(r.stdout), str(r.stderr)];
  return streams.some((s) => s !== undefined) ? streams.filter((s) => s).join('\n') : undefined;
}

function isToolResult(type: string | undefined): boolean {
  return type === 'tool_result' || (type ?? '').endsWith('_tool_result');
}

function contentParts(rec: Rec): unknown[] | undefined {
  const content = isRec(rec.message) ? rec.message.content : undefined;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : undefined;
}

/** Text of a content value: a string, or blocks whose text is kept and whose other kinds stay as JSON. */
function flatten(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  if (!Array.isArray(v)) return JSON.stringify(v);
  return v
    .map((p) => {
      if (typeof p === 'string') return p;
      if (isRec(p) && p.type === 'text') return str(p.text) ?? '';
      if (isRec(p) && (p.type === 'image' || p.type === 'document')) return attachment(p);
      return JSON.stringify(p);
    })
    .join('\n');
}

/** Base64 payloads are not text anyone searches; say what was attached and how big it was. */
function attachment(p: Rec): string {
  const source = isRec(p.source) ? p.source : {};
  const data = str(source.data);
  const what = [str(p.type), str(source.media_type), data ? `${data.length} base64 chars` : str(source.url)].filter(Boolean);
  return `[${what.join(' ')}]`;
}

function renderInput(input: unknown): string {
  if (typeof input === 'string') return input;
  if (isRec(input) && typeof input.command === 'string') return input.command;
  return JSON.stringify(input) ?? '';
}

function promptTitle(text: string): string | undefined {
  const name = /<command-name>([\s\S]*?)<\/command-name>/.exec(text)?.[1];
  const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(text)?.[1];
  const plain = (name ? `${name} ${args ?? ''}` : text.replace(META_BLOCK, '')).replace(/\s+/g, ' ').trim();
  const chars = [...plain];
  return !plain ? undefined : chars.length > 80 ? chars.slice(0, 79).join('') + '…' : plain;
}
