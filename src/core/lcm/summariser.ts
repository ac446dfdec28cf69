import { countTokens } from '../text/tokens';
import { extractiveSummary } from './extractiveSummary';
import type { LanguageModelPort, ModelMessage } from './languageModel';
import type { SummaryKind } from './lcmSchema';

/** One event as the summariser sees it: full text, and the file id when it was kept as a large file. */
export interface LeafItem {
  eventId: number;
  kind: string;
  text: string;
  toolName: string | null;
  toolInput: string | null;
  isError: boolean;
  at: number | null;
  file?: { id: string; name: string; tokens: number; exploration: string } | undefined;
}

export interface ChildSummary {
  id: string;
  depth: number;
  content: string;
  earliestAt: number | null;
  latestAt: number | null;
}

export interface SummaryRequest {
  depth: number;
  kind: SummaryKind;
  sessionTitle: string | null;
  earliestAt: number | null;
  latestAt: number | null;
  /** Leaf: the events. */
  items: LeafItem[];
  /** Condensed: the summaries one level down. */
  children: ChildSummary[];
  /** What came just before at this depth, so it is not repeated. */
  previousSummary: string | null;
  targetTokens: number;
}

export interface SummaryResult {
  content: string;
  /** "extractive" or "model:<name>": each summary records what produced it. */
  producer: string;
}

export interface Summariser {
  summarize(req: SummaryRequest, signal?: AbortSignal): Promise<SummaryResult>;
}

export const FOOTER = 'Expand for details about:';

export const extractiveSummariser: Summariser = {
  summarize: (req) => Promise.resolve({ content: extractiveSummary(req), producer: 'extractive' }),
};

/**
 * Each level asks for something more abstract than the one below: a leaf keeps the working
 * detail, a session segment keeps decisions, an arc keeps themes, the top keeps what lasts.
 */
const LEVEL_PROMPTS = [
  'Summarise this slice of a coding-agent chat session for later recall. Keep what was asked, decisions and their reasons, commands run, files touched, errors with their fixes, and outcomes. Name large outputs by their file_… id instead of quoting them.',
  'Condense these consecutive summaries into one summary of a session segment: goals, decisions, outcomes and open problems. Drop step-by-step detail.',
  'Condense these summaries into the arc of the work: themes, the state reached, and decisions that still matter. Drop individual steps.',
  'Condense these summaries into only what lasts: conventions adopted, durable decisions, unresolved issues.',
];

/**
 * Summaries written by a language model when one may be used; the extractive summariser
 * otherwise, and whenever the model fails, so building never stops on a model problem.
 */
export class ModelSummariser implements Summariser {
  constructor(private readonly model: () => LanguageModelPort | undefined) {}

  async summarize(req: SummaryRequest, signal?: AbortSignal): Promise<SummaryResult> {
    const model = this.model();
    if (!model?.available()) return extractiveSummariser.summarize(req);
    try {
      const reply = await model.complete(promptFor(req), { maxOutputTokens: req.targetTokens * 2, background: true, justification: 'Recollect summarises your imported chat history so agents can recall it.' }, signal ?? new AbortController().signal);
      let content = reply.text.trim();
      if (!content) return extractiveSummariser.summarize(req);
      // The footer is part of the contract: a model that forgot it gets the extractive one.
      if (!content.includes(FOOTER)) content += '\n' + extractiveFooter(req);
      return { content, producer: `model:${model.describe()}` };
    } catch {
      // Declined, no model, cancelled or a bad reply: the extractive summary still gets written.
      return extractiveSummariser.summarize(req);
    }
  }
}

function promptFor(req: SummaryRequest): ModelMessage[] {
  const level = LEVEL_PROMPTS[Math.min(req.depth, LEVEL_PROMPTS.length - 1)] as string;
  const rules = `${level}\nAt most ${req.targetTokens} tokens. End with one line that starts "${FOOTER}" and names what you left out (commands, paths, error texts, file_… ids), so a reader knows what expanding would give.`;
  const body =
    req.kind === 'leaf'
      ? req.items.map((i) => `[${i.kind}${i.toolName ? ` ${i.toolName}` : ''}${i.isError ? ' error' : ''}] ${i.file ? `(${i.file.id}: ${i.file.name}, ${i.file.tokens} tokens)\n${i.file.exploration}` : clip(i.text, 6_000)}`).join('\n\n')
      : req.children.map((c) => `## ${c.id}\n${c.content}`).join('\n\n');
  const messages: ModelMessage[] = [{ role: 'system', content: rules }];
  if (req.previousSummary) messages.push({ role: 'user', content: `For context only, the summary just before this part (do not repeat it):\n${req.previousSummary}` });
  messages.push({ role: 'user', content: `${req.sessionTitle ? `Session: ${req.sessionTitle}\n\n` : ''}${body}` });
  return messages;
}

function extractiveFooter(req: SummaryRequest): string {
  const text = extractiveSummary(req);
  const at = text.lastIndexOf(FOOTER);
  return at >= 0 ? text.slice(at) : `${FOOTER} the full source messages.`;
}

function clip(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars)}… (${text.length - chars} more characters)`;
}

/** Cuts text to at most `max` tokens on a character boundary found by bisection (the tokenizer only counts). */
export function fitTokens(text: string, max: number): { text: string; cut: boolean; tokens: number } {
  const tokens = countTokens(text);
  if (tokens <= max) return { text, cut: false, tokens };
  // Bisection over characters, started near the measured chars-per-token ratio so long texts cost few encodes.
  let lo = 0;
  let hi = Math.min(text.length, Math.ceil((max * text.length * 1.5) / tokens) + 16);
  if (hi < text.length && countTokens(text.slice(0, hi)) <= max) hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(text.slice(0, mid)) <= max) lo = mid;
    else hi = mid - 1;
  }
  const cut = text.slice(0, lo);
  return { text: cut, cut: true, tokens: countTokens(cut) };
}
