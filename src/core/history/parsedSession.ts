/**
 * What every transcript parser produces: a neutral shape, independent of the store, so each
 * format's quirks stay inside its own parser and the importer only ever sees this.
 */

export type HistorySource = 'vscode-chat' | 'copilot-transcript' | 'copilot-cli' | 'claude-code' | 'codex';

export type EventKind = 'user' | 'assistant' | 'reasoning' | 'tool_call' | 'tool_result' | 'summary' | 'system' | 'unknown';

export interface ParsedEvent {
  /** Stable across re-imports of the same (or a grown) file: the source's own id, else a position-derived key. */
  key: string;
  kind: EventKind;
  /** The full text (tool output included). The store decides what is indexed and what goes to the blob store. */
  text: string;
  /** Epoch milliseconds, when the source says. */
  at?: number;
  toolName?: string;
  /** Links a tool_call to its tool_result. */
  callId?: string;
  /** For tool_call: the arguments as the source recorded them. */
  toolInput?: unknown;
  /** For tool_result: the tool failed. */
  isError?: boolean;
  /** The source's tree link (Claude Code parentUuid), so branches are kept, not flattened away. */
  parentKey?: string;
  /** Events sharing a runKey form one run: one request and everything it caused (the spec's task_id). */
  runKey?: string;
  model?: string;
  /** The source's own type name (e.g. "toolInvocationSerialized"), kept so unknown kinds are not lost. */
  rawType?: string;
}

export interface ParsedSession {
  source: HistorySource;
  /** The source's session id. */
  externalId: string;
  title?: string;
  workspace?: string;
  model?: string;
  startedAt?: number;
  updatedAt?: number;
  /** A sidechain/sub-agent session names the session that spawned it. */
  parentExternalId?: string;
  events: ParsedEvent[];
}

export interface ParseProblem {
  file: string;
  /** 1-based line for line formats. */
  line?: number;
  reason: string;
}

export interface ParseResult {
  sessions: ParsedSession[];
  problems: ParseProblem[];
  /** Record/part types the parser did not recognise, with how often; they are kept as `unknown` events. */
  unknownTypes: Record<string, number>;
}

/** A parser is pure: a file's path (for provenance and sidechain naming) and its text in, a result out. Never throws on bad data. */
export type TranscriptParser = (file: string, text: string) => ParseResult;
