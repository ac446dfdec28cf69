import { clip } from './plans';
import type { ChapterEvent, TokenEstimate } from './sessionEvents';

/** Heading, fence and facts a rendered event adds to its text, in tokens (measured on the fixtures: 14–22). */
const RENDER_OVERHEAD_TOKENS = 20;
/** Tool results listed by chapters_segment; the largest are kept when there are more, and the rest are counted. */
export const TOOL_RESULTS_LISTED = 60;

export interface ProposedRange {
  startSeq: number;
  endSeq: number;
  /** Editable: chapters_continue takes the title and summary you give; the chapter text is always the events. */
  title: string;
  summary: string;
  estimatedTokens: number;
  runs: number;
  overTarget: boolean;
}

export interface ToolResultFact {
  seq: number;
  toolName: string | null;
  bytes: number;
  estimatedTokens: number;
  excerpt: string;
  /** The blob holding the whole output when it was too large to keep inline: chapters_artifact reads it. */
  artifact: string | null;
}

interface RunGroup {
  events: ChapterEvent[];
  tokens: number;
}

/**
 * Chapter-shaped ranges over (afterSeq, uptoSeq]: whole runs (one request and all it caused)
 * grouped until the next run would pass the target. A run larger than the target is a chapter
 * of its own and is marked overTarget rather than cut inside the request. The last range may
 * end inside a run when uptoSeq does (a person chose to archive up to that row).
 */
export function proposeRanges(events: readonly ChapterEvent[], afterSeq: number, uptoSeq: number, targetTokens: number, estimate: TokenEstimate): ProposedRange[] {
  const runs: RunGroup[] = [];
  for (const e of events) {
    if (e.seq <= afterSeq || e.seq > uptoSeq) continue;
    const last = runs[runs.length - 1];
    const tokens = estimate(e) + RENDER_OVERHEAD_TOKENS;
    if (last && (last.events[last.events.length - 1] as ChapterEvent).runId === e.runId) {
      last.events.push(e);
      last.tokens += tokens;
    } else {
      runs.push({ events: [e], tokens });
    }
  }
  const groups: RunGroup[][] = [];
  let current: RunGroup[] = [];
  let size = 0;
  for (const run of runs) {
    if (current.length && size + run.tokens > targetTokens) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(run);
    size += run.tokens;
  }
  if (current.length) groups.push(current);
  return groups.map((g) => describe(g, targetTokens));
}

function describe(group: RunGroup[], targetTokens: number): ProposedRange {
  const events = group.flatMap((r) => r.events);
  const first = events[0] as ChapterEvent;
  const last = events[events.length - 1] as ChapterEvent;
  const tokens = group.reduce((n, r) => n + r.tokens, 0);
  const requests = events.filter((e) => e.kind === 'user').map((e) => clip(firstLine(e.text), 80)).filter(Boolean);
  const tools = new Map<string, number>();
  for (const e of events) if (e.kind === 'tool_call' && e.toolName) tools.set(e.toolName, (tools.get(e.toolName) ?? 0) + 1);
  const toolText = [...tools.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([n, c]) => (c > 1 ? `${n} ×${c}` : n)).join(', ');
  const title = requests[0]
    ? `${requests[0]}${requests.length > 1 ? ` (+${requests.length - 1} more request${requests.length > 2 ? 's' : ''})` : ''}`
    : `Seq ${first.seq}–${last.seq}: ${[...new Set(events.map((e) => e.kind))].join(', ')}`;
  const parts = [];
  if (requests.length) parts.push(`Requests: ${requests.slice(0, 3).map((r) => `"${r}"`).join('; ')}${requests.length > 3 ? ` and ${requests.length - 3} more` : ''}.`);
  if (toolText) parts.push(`Tools: ${toolText}.`);
  parts.push(`${events.length} events, seq ${first.seq}–${last.seq}.`);
  return { startSeq: first.seq, endSeq: last.seq, title, summary: parts.join(' '), estimatedTokens: tokens, runs: group.length, overTarget: tokens > targetTokens };
}

/** The tool results in (afterSeq, uptoSeq] with their real sizes, so a model can see what is heavy before choosing ranges. */
export function toolResultFacts(events: readonly ChapterEvent[], afterSeq: number, uptoSeq: number, estimate: TokenEstimate): { listed: ToolResultFact[]; omitted: number } {
  const all = events
    .filter((e) => e.kind === 'tool_result' && e.seq > afterSeq && e.seq <= uptoSeq)
    .map((e) => ({ seq: e.seq, toolName: e.toolName, bytes: e.bytes, estimatedTokens: estimate(e), excerpt: clip(e.text.replace(/\s+/g, ' ').trim(), 160), artifact: e.blob }));
  if (all.length <= TOOL_RESULTS_LISTED) return { listed: all, omitted: 0 };
  const kept = [...all].sort((a, b) => b.bytes - a.bytes).slice(0, TOOL_RESULTS_LISTED).sort((a, b) => a.seq - b.seq);
  return { listed: kept, omitted: all.length - kept.length };
}

function firstLine(s: string): string {
  return (s.split('\n').find((l) => l.trim()) ?? '').trim();
}
