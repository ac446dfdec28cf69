import { randomBytes } from 'node:crypto';
import type { ChildIntent } from './chaptersSchema';

/** A chapter as the table of contents names it. */
export interface TocChapter {
  id: string;
  title: string;
  summary: string;
  sessionId: string;
  source: string;
  startSeq: number;
  endSeq: number;
  tokens: number;
  sha256: string;
  firstAt: number | null;
  lastAt: number | null;
}

export interface TocPlan {
  id: string;
  chapterId: string;
  toolName: string;
  seq: number;
  title: string;
  status: string;
  outline: string[];
}

export interface FirstMessageInput {
  marker: string;
  intent: ChildIntent;
  parent: { id: string; title: string | null; source: string };
  /** The sessions the chapters come from, oldest first, ending with the parent. */
  lineage: string[];
  chapters: readonly TocChapter[];
  latestPlan: TocPlan | null;
  note: string;
}

const MARKER = /\[recollect child (rcm-[0-9a-f]{8}): (continue|fork) of (ses_[0-9a-f]{16})\]/;
const CHAPTER_ID = /`(ch_[0-9a-z]+)`/g;
const PLAN_OUTLINE_LINES = 12;

export function newMarker(): string {
  return `rcm-${randomBytes(4).toString('hex')}`;
}

/**
 * The next session's first message. The first line is the marker: it names the parent, so a
 * chat session that shows up later with this text can be linked to it even when nothing was
 * recorded in advance (a model's fork writes nothing).
 */
export function buildFirstMessage(m: FirstMessageInput): { text: string; toc: string; note: string } {
  const head = [
    `[recollect child ${m.marker}: ${m.intent} of ${m.parent.id}]`,
    m.intent === 'continue'
      ? `You are continuing an earlier session${m.parent.title ? ` ("${oneLine(m.parent.title).slice(0, 120)}", ${m.parent.source})` : ''}.`
      : `You are a branch of an earlier session${m.parent.title ? ` ("${oneLine(m.parent.title).slice(0, 120)}", ${m.parent.source})` : ''}, trying another angle from where it stood.`,
    'Its history is archived verbatim as chapters; this message is their table of contents and a handoff note. When you need what a chapter said, open it with chapters_artifact (ref = the chapter id; action toc, search or read) instead of guessing, and search everything archived with chapters_search.',
  ];
  if (m.lineage.length > 1) head.push(`Lineage: ${m.lineage.join(' → ')}.`);
  const total = m.chapters.reduce((n, c) => n + c.tokens, 0);
  const toc = [`## Chapters (${m.chapters.length}, ${total.toLocaleString('en-US')} tokens archived)`];
  if (!m.chapters.length) toc.push('Nothing was archived yet.');
  m.chapters.forEach((c, i) => {
    const date = c.lastAt === null ? '' : ` · ${new Date(c.lastAt).toISOString().slice(0, 10)}`;
    toc.push(`${i + 1}. **${oneLine(c.title)}** — ${c.source} ${c.sessionId} seq ${c.startSeq}–${c.endSeq}${date} · ${c.tokens.toLocaleString('en-US')} tokens · \`${c.id}\``);
    if (c.summary.trim()) toc.push(`   ${oneLine(c.summary)}`);
  });
  if (m.latestPlan) toc.push('', ...planSection(m.latestPlan, m.intent, m.chapters.findIndex((c) => c.id === m.latestPlan?.chapterId) + 1));
  const note = ['## Handoff note', m.note.trim() ? m.note : '(none given)'];
  const tocText = [...head, '', ...toc].join('\n');
  const noteText = note.join('\n');
  return { text: `${tocText}\n\n${noteText}\n`, toc: tocText, note: noteText };
}

/** The intent alone decides what the child is told about plans: a continuation owns the plan, a branch does not. */
function planSection(p: TocPlan, intent: ChildIntent, chapterNumber: number): string[] {
  const where = `${p.toolName} at seq ${p.seq}${chapterNumber > 0 ? `, chapter ${chapterNumber}` : ''}`;
  const lines = [
    '## Plan',
    `${oneLine(p.title)} — ${p.status} (${where}, \`${p.id}\`).`,
    ...p.outline.slice(0, PLAN_OUTLINE_LINES).map((l) => `- ${oneLine(l)}`),
  ];
  if (p.outline.length > PLAN_OUTLINE_LINES) lines.push(`- … ${p.outline.length - PLAN_OUTLINE_LINES} more steps in the plan (chapters_artifact ref \`${p.id}\`)`);
  lines.push(
    intent === 'continue'
      ? 'This plan is yours: carry it on and keep it current with your own planning tool.'
      : "This plan belongs to the parent session, which may still be working on it. Do not mark its steps done; make this branch's own plan.",
  );
  return lines;
}

export interface ParsedMarker {
  marker: string;
  intent: ChildIntent;
  parentSessionId: string;
  /** Chapter ids the table of contents names, in order. */
  chapterIds: string[];
}

export function parseMarker(text: string): ParsedMarker | undefined {
  const m = MARKER.exec(text);
  if (!m) return undefined;
  const chapterIds = [...new Set([...text.matchAll(CHAPTER_ID)].map((c) => c[1] as string))];
  return { marker: m[1] as string, intent: m[2] as ChildIntent, parentSessionId: m[3] as string, chapterIds };
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
