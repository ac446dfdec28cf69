/** One tool call as a surface ran it, before it is cut down to an activity row. */
export interface ToolCall {
  client: string;
  tool: string;
  /** The validated input, or the raw one when validation refused it. */
  input: unknown;
  /** What the tool answered; absent when it threw. */
  result?: object | undefined;
  /** The message of an internal failure the surface reports as such. */
  error?: string | undefined;
  ms: number;
}

/** What a person sees of one call: who, what, whether it answered, and short excerpts. */
export interface ActivityRow {
  at: string;
  client: string;
  tool: string;
  ok: boolean;
  ms: number;
  input: string;
  /** The refusal's or failure's reason, else the start of the answer. */
  result: string;
}

/** Excerpts are for recognising a call, not replaying it: a 10 MB write_result keeps this much. */
export const EXCERPT_CHARS = 300;
const NAME_CHARS = 100;
/** Walking a value stops this deep and this wide, so an excerpt never serialises a whole payload first. */
const MAX_DEPTH = 4;
const MAX_ITEMS = 20;

export function activityRow(call: ToolCall, at: number): ActivityRow {
  const refused = call.result !== undefined && (call.result as { ok?: unknown }).ok === false;
  const reason = call.error ?? (refused ? (call.result as { reason?: unknown }).reason : undefined);
  return {
    at: new Date(at).toISOString(),
    client: cut(call.client, NAME_CHARS),
    tool: cut(call.tool, NAME_CHARS),
    ok: call.error === undefined && !refused,
    ms: Math.round(call.ms),
    input: excerpt(call.input),
    result: typeof reason === 'string' ? cut(reason, EXCERPT_CHARS) : excerpt(call.result),
  };
}

/** JSON of the value with long strings, arrays and objects cut before it is serialised, then cut to EXCERPT_CHARS. */
export function excerpt(value: unknown): string {
  return cut(JSON.stringify(shorten(value, 0)) ?? '', EXCERPT_CHARS);
}

function shorten(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return cut(value, EXCERPT_CHARS);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '…';
  if (Array.isArray(value)) {
    const head = value.slice(0, MAX_ITEMS).map((v) => shorten(v, depth + 1));
    return value.length > MAX_ITEMS ? [...head, `… ${value.length - MAX_ITEMS} more`] : head;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.slice(0, MAX_ITEMS)) out[cut(k, NAME_CHARS)] = shorten(v, depth + 1);
  if (entries.length > MAX_ITEMS) out['…'] = `${entries.length - MAX_ITEMS} more`;
  return out;
}

/** The text's first `max` characters and an ellipsis, never splitting a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}
