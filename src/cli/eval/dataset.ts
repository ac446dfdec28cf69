/**
 * The one shape every benchmark format is read into, so loading, asking and scoring are
 * written once. A turn's `key` is the format's own id for it (LoCoMo's dia_id, LongMemEval's
 * session id + turn index), so a reader can trace a number back to the source file.
 */
export interface EvalTurn {
  key: string;
  /** Who said it: LoCoMo's speaker name, LongMemEval's role. */
  speaker: string;
  text: string;
  /** Epoch ms the turn was said (its session's date); turns are loaded in this order. */
  at: number;
  /** The format's id of the session the turn belongs to (LoCoMo's session_N, LongMemEval's session id). */
  session: string;
}

export interface EvalQuestion {
  id: string;
  question: string;
  /** The format's question type or category, when it has one. */
  type?: string | undefined;
  /** Epoch ms the question is asked at (never before the last turn: see the formats). */
  askedAt: number;
  /** Keys of the turns holding the answer. */
  evidence: string[];
}

/** One conversation: loaded into its own fresh store, then asked its questions. */
export interface EvalConversation {
  id: string;
  turns: EvalTurn[];
  questions: EvalQuestion[];
}

export type EvalFormat = 'longmemeval' | 'locomo';

export interface EvalDataset {
  format: EvalFormat;
  conversations: EvalConversation[];
  /** What the reader could not use (a date it could not read, evidence naming no turn), counted not dropped silently. */
  problems: string[];
}

/** Thrown for a file that is not the format it claims; the CLI prints the message and exits 1. */
export class DatasetError extends Error {}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sorts turns by time (stable), keeping the file's order for equal times, as a memory would have seen them. */
export function chronological(turns: EvalTurn[]): EvalTurn[] {
  return turns.map((t, i) => ({ t, i })).sort((a, b) => a.t.at - b.t.at || a.i - b.i).map(({ t }) => t);
}
