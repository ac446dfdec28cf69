/**
 * The knobs of the summary DAG and of expansion. Defaults suit real sessions; tests shrink them
 * so the small fixtures still produce several levels.
 */
export interface LcmConfig {
  /** The newest events of a session stay out of the DAG: they are still the live context. */
  freshTailEvents: number;
  /** Source size a leaf aims at, in estimated tokens (UTF-8 bytes ÷ 4; see dagPlan.ts for why). */
  leafChunkTokens: number;
  /** A leaf never covers more events than this, however small they are. */
  leafMaxEvents: number;
  /** Target length of a leaf summary, in real tokens. */
  leafSummaryTokens: number;
  /** Target length of a condensed summary, in real tokens. */
  condensedSummaryTokens: number;
  /** A session updated this recently keeps its last small chunk open, so leaves do not fragment while it grows. */
  quietMs: number;
  /** This many uncondensed summaries at one depth are condensed into one a level up. */
  condenseFanIn: number;
  /** No summary is built above this depth. */
  maxDepth: number;
  /** Content (a tool output, a file) over this many tokens is kept once as a file_… with an exploration summary. */
  largeFileTokens: number;
  /** Wall-clock limit of one lcm_expand_query sub-agent run. */
  expandTimeoutMs: number;
  /** Tokens the sub-agent may read through lcm_expand in one run (LCM_MAX_EXPAND_TOKENS). */
  maxExpandTokens: number;
  /** Model turns the sub-agent may take before it must answer. */
  maxAgentTurns: number;
  /** Cross-conversation lcm_expand_query expands at most this many conversations. */
  maxConversations: number;
}

export const DEFAULT_LCM_CONFIG: Readonly<LcmConfig> = {
  freshTailEvents: 16,
  leafChunkTokens: 6_000,
  leafMaxEvents: 48,
  leafSummaryTokens: 500,
  condensedSummaryTokens: 700,
  quietMs: 3_600_000,
  condenseFanIn: 4,
  maxDepth: 5,
  largeFileTokens: 4_000,
  expandTimeoutMs: 120_000,
  maxExpandTokens: 16_000,
  maxAgentTurns: 8,
  maxConversations: 3,
};
