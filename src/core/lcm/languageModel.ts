/**
 * What core needs from a language model, and nothing more: the extension host implements it
 * with vscode.lm; the CLI and the MCP server have none, and everything still works without it
 * (the extractive summariser, excerpt answers). Tests use a scripted model.
 */
export interface ModelToolCall {
  id: string;
  name: string;
  input: unknown;
}

export type ModelMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelReply {
  text: string;
  toolCalls: ModelToolCall[];
}

export interface CompleteOptions {
  /** The only tools the model is offered; a call to anything else is answered with an error, never run. */
  tools?: ModelToolSpec[];
  maxOutputTokens?: number;
  /** Shown to the person when the host asks for consent. */
  justification?: string;
  /** A background caller (the DAG builder) does not wait for the person's consent; it is refused and falls back. */
  background?: boolean;
}

export interface LanguageModelPort {
  /** Cheap and synchronous: whether a model may be used at all (setting on, consent not refused, API present). */
  available(): boolean;
  /** Names the model for the records ("which produced it"); undefined until one was chosen. */
  describe(): string;
  complete(messages: ModelMessage[], options: CompleteOptions, signal: AbortSignal): Promise<ModelReply>;
}

/** Thrown by a port when the person declined or no model can be found, so callers fall back quietly. */
export class ModelUnavailableError extends Error {}
