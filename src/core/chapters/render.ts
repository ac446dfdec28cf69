import type { DetectedPlan } from './plans';
import type { ChapterEvent, SessionInfo } from './sessionEvents';

/** An event with its whole text, as a chapter holds it. */
export interface FullEvent extends ChapterEvent {
  full: string;
}

export interface ChapterHeader {
  id: string;
  title: string;
  summary: string;
  session: SessionInfo;
  startSeq: number;
  endSeq: number;
}

/** How much of each event the keyword index sees, and of the whole chapter; the blob keeps everything. */
const INDEX_PER_EVENT = 1_000;
const INDEX_MAX = 32_000;

/**
 * Renders a chapter as Markdown: a front matter of facts, the title and summary (the only words
 * a model chose), then every event under its own heading with its text verbatim inside a fence
 * longer than any backtick run in that text — so no event text can close its fence, and
 * `parseChapter` gives back every text byte for byte.
 */
export function renderChapter(h: ChapterHeader, events: readonly FullEvent[]): string {
  const out: string[] = [
    '---',
    `chapter: ${h.id}`,
    `title: ${JSON.stringify(h.title)}`,
    `session: ${h.session.id}`,
    `source: ${h.session.source}`,
    `workspace: ${JSON.stringify(h.session.workspace ?? '')}`,
    `seqRange: [${h.startSeq}, ${h.endSeq}]`,
    `events: ${events.length}`,
    '---',
    '',
    `# ${oneLine(h.title)}`,
    '',
    ...h.summary.split('\n').map((l) => `> ${l}`),
    '',
  ];
  for (const e of events) {
    const facts = [`seq ${e.seq}`, e.kind, e.toolName, e.isError ? 'error' : null, e.at === null ? null : new Date(e.at).toISOString()].filter((f): f is string => !!f);
    out.push(`## ${oneLine(facts.join(' · '))}`, '', ...fenced(e.full, 'text'));
    if (e.toolInput !== null && e.toolInput !== e.full) out.push('input:', '', ...fenced(e.toolInput, 'json'));
  }
  return out.join('\n');
}

function fenced(text: string, info: string): string[] {
  const fence = '`'.repeat(Math.max(3, longestRun(text, '`') + 1));
  // The text, then one newline that is not its own, then the fence: the parser strips exactly that newline.
  return [`${fence}${info}`, `${text}`, fence, ''];
}

export interface ParsedEventBlock {
  seq: number;
  kind: string;
  text: string;
  input: string | null;
}

/** Reads a rendered chapter back into its events' texts (the inverse of renderChapter for what is verbatim). */
export function parseChapter(markdown: string): ParsedEventBlock[] {
  const blocks: ParsedEventBlock[] = [];
  const header = /^## seq (\d+) · ([a-z_]+)/gm;
  let m: RegExpExecArray | null;
  let pos = 0;
  while ((m = next(header, markdown, pos))) {
    const afterHeader = markdown.indexOf('\n', m.index) + 1;
    const body = readFence(markdown, afterHeader + 1);
    if (!body) break;
    let input: string | null = null;
    pos = body.end;
    if (markdown.startsWith('input:\n\n', body.end)) {
      const inp = readFence(markdown, body.end + 'input:\n\n'.length);
      if (inp) {
        input = inp.text;
        pos = inp.end;
      }
    }
    blocks.push({ seq: Number(m[1]), kind: String(m[2]), text: body.text, input });
  }
  return blocks;
}

function next(re: RegExp, s: string, from: number): RegExpExecArray | null {
  re.lastIndex = from;
  return re.exec(s);
}

function readFence(s: string, at: number): { text: string; end: number } | undefined {
  const lineEnd = s.indexOf('\n', at);
  if (lineEnd < 0) return undefined;
  const fence = /^`{3,}/.exec(s.slice(at, lineEnd))?.[0];
  if (!fence) return undefined;
  const start = lineEnd + 1;
  const close = s.indexOf(`\n${fence}\n`, start - 1);
  if (close < 0) return undefined;
  // An empty text leaves the opening line's own newline as the separator.
  const text = close < start ? '' : s.slice(start, close);
  return { text, end: close + fence.length + 3 };
}

/** What the keyword index sees of a chapter: bounded, so the journal line stays small. */
export function indexTextOf(h: { title: string; summary: string; topics: string[] }, events: readonly FullEvent[]): string {
  const parts = [h.title, h.summary, h.topics.join(' ')];
  let size = parts.join('\n').length;
  for (const e of events) {
    if (size >= INDEX_MAX) break;
    const piece = `${e.toolName ?? ''} ${e.full.slice(0, INDEX_PER_EVENT)}`.trim();
    parts.push(piece.slice(0, INDEX_MAX - size));
    size += piece.length + 1;
  }
  return parts.join('\n');
}

/** A chapter's topics: the tools it used most, its source, and its workspace's folder name. */
export function topicsOf(session: SessionInfo, events: readonly ChapterEvent[]): string[] {
  const counts = new Map<string, number>();
  for (const e of events) if (e.kind === 'tool_call' && e.toolName) counts.set(e.toolName, (counts.get(e.toolName) ?? 0) + 1);
  const tools = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3).map(([name]) => name);
  const folder = session.workspace?.split(/[\\/]/).filter(Boolean).pop();
  return [...tools, session.source, ...(folder ? [folder] : [])];
}

export function renderPlan(p: DetectedPlan, ids: { plan: string; chapter: string; session: string }): string {
  return [
    '---',
    `plan: ${ids.plan}`,
    `chapter: ${ids.chapter}`,
    `session: ${ids.session}`,
    `seq: ${p.seq}`,
    `tool: ${p.toolName}`,
    `status: ${p.status}`,
    `verdict: ${JSON.stringify(p.verdict)}`,
    '---',
    '',
    `# ${oneLine(p.title)}`,
    '',
    ...p.outline.map((l) => `- ${l}`),
    '',
  ].join('\n');
}

function longestRun(text: string, ch: string): number {
  let best = 0;
  let run = 0;
  for (const c of text) {
    run = c === ch ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
