import * as path from 'node:path';
import { refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { queryScalar } from '../store/sqlite';
import { countTokens } from '../text/tokens';

export const READ_DEFAULT_LINES = 200;
export const READ_MAX_LINES = 400;
export const PACK_DEFAULT_TOKENS = 400;
/** Lines of context kept on each side of a match, inside its paragraph. */
const BLOCK_CONTEXT = 3;
/** A matched line longer than this is shown as a window around the match, and says so. */
const LINE_WINDOW = 480;

export interface ArtifactText {
  ref: string;
  sha256: string;
  path: string;
  lines: string[];
}

/**
 * Finds the blob a reference names: a chapter id (ch_…), a plan id (plan_…), a child session id
 * (rcs_…, its first message), a sha256, or a path inside the blob store — never any other file.
 */
export function openArtifact(store: Store, ref: string): ArtifactText | Refusal {
  const r = ref.trim();
  let sha: string | undefined;
  if (/^ch_[0-9a-z]+$/.test(r)) sha = str(queryScalar(store.db, 'SELECT sha256 FROM chapters WHERE id = ?', [r]));
  else if (/^plan_[0-9a-z]+$/.test(r)) sha = str(queryScalar(store.db, 'SELECT sha256 FROM chapter_plans WHERE id = ?', [r]));
  else if (/^rcs_[0-9a-z]+$/.test(r)) sha = str(queryScalar(store.db, 'SELECT first_message_sha FROM child_sessions WHERE id = ?', [r]));
  else if (/^[0-9a-f]{64}$/.test(r)) sha = r;
  else if (path.isAbsolute(r)) {
    sha = store.blobs.hashOfPath(r);
    if (!sha) return refuse(`"${r.slice(0, 200)}" is not a file of Recollect's blob store; chapters_artifact reads only archived chapters, plans and stored outputs.`);
  } else return refuse(`ref "${r.slice(0, 120)}" is not a chapter id (ch_…), plan id (plan_…), child session id (rcs_…), sha256 or blob path; chapters_search and chapters_segment return them.`);
  if (!sha) return refuse(`nothing is archived under "${r}"; chapters_search lists what is.`);
  const content = store.blobs.get(sha);
  if (!content) return refuse(`the blob ${sha.slice(0, 12)}… that "${r}" names is missing from the store at ${store.blobs.pathOf(sha)}.`);
  const text = content.toString('utf8');
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return { ref: r, sha256: sha, path: store.blobs.pathOf(sha), lines };
}

export interface PackBudget {
  requested: number;
  used: number;
  remaining: number;
}

/** The heading map (Markdown headings outside code fences) with 1-based line numbers, packed into the budget in order. */
export function artifactToc(a: ArtifactText, budget = PACK_DEFAULT_TOKENS) {
  const headings = headingsOf(a.lines);
  const { kept, used } = pack(headings, budget);
  return {
    ok: true as const,
    action: 'toc' as const,
    ref: a.ref,
    sha256: a.sha256,
    path: a.path,
    of: a.lines.length,
    headings: kept,
    total: headings.length,
    shown: kept.length,
    truncated: kept.length < headings.length,
    remaining: headings.length - kept.length,
    budget: { requested: budget, used, remaining: budget - used },
    ...(kept.length < headings.length ? { next: `${headings.length - kept.length} more headings did not fit the ${budget}-token budget; the next starts at line ${headings[kept.length]?.line}: read from there, or ask again with a larger budget.` } : {}),
  };
}

interface Block {
  startLine: number;
  endLine: number;
  matches: number;
  text: string;
  clipped: boolean;
}

/** Lines holding `query` (any case), each shown inside its paragraph with a few lines of context; blocks packed into the budget in order. */
export function artifactSearch(a: ArtifactText, query: string, budget = PACK_DEFAULT_TOKENS) {
  const needle = query.toLowerCase();
  const hits: number[] = [];
  a.lines.forEach((l, i) => l.toLowerCase().includes(needle) && hits.push(i));
  const blocks = blocksAround(a.lines, hits, needle);
  const { kept, used } = pack(blocks, budget);
  const shownMatches = kept.reduce((n, b) => n + b.matches, 0);
  return {
    ok: true as const,
    action: 'search' as const,
    ref: a.ref,
    sha256: a.sha256,
    query,
    of: a.lines.length,
    blocks: kept,
    totalMatches: hits.length,
    truncated: shownMatches < hits.length,
    remainingMatches: hits.length - shownMatches,
    budget: { requested: budget, used, remaining: budget - used },
    ...(kept.length < blocks.length
      ? { next: `${hits.length - shownMatches} more matching lines did not fit the ${budget}-token budget; the next block starts at line ${blocks[kept.length]?.startLine}: read it there, or search again with a larger budget.` }
      : {}),
  };
}

/** A 1-based window of lines. */
export function artifactRead(a: ArtifactText, start = 1, count = READ_DEFAULT_LINES) {
  if (a.lines.length === 0) return refuse(`${a.ref} is empty.`);
  if (start > a.lines.length) return refuse(`start ${start} is past the end: ${a.ref} has ${a.lines.length} lines.`, { limit: a.lines.length, used: start, unit: 'items' });
  const end = Math.min(a.lines.length, start + count - 1);
  const lines = a.lines.slice(start - 1, end);
  return {
    ok: true as const,
    action: 'read' as const,
    ref: a.ref,
    sha256: a.sha256,
    start,
    end,
    of: a.lines.length,
    lines,
    tokens: countTokens(lines.join('\n')),
    next: end < a.lines.length ? end + 1 : null,
  };
}

function headingsOf(lines: readonly string[]): { line: number; level: number; text: string }[] {
  const out: { line: number; level: number; text: string }[] = [];
  let fence: { char: string; size: number } | null = null;
  lines.forEach((l, i) => {
    const f = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(l);
    if (fence) {
      if (f && f[1]?.[0] === fence.char && (f[1]?.length ?? 0) >= fence.size && !f[2]?.trim()) fence = null;
      return;
    }
    if (f && !(f[1]?.[0] === '`' && f[2]?.includes('`'))) {
      fence = { char: (f[1] as string)[0] as string, size: (f[1] as string).length };
      return;
    }
    const h = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(l);
    if (h) out.push({ line: i + 1, level: (h[1] as string).length, text: h[2] as string });
  });
  return out;
}

function blocksAround(lines: readonly string[], hits: readonly number[], needle: string): Block[] {
  const hitSet = new Set(hits);
  const blocks: Block[] = [];
  for (const h of hits) {
    let from = h;
    let to = h;
    while (from > 0 && h - from < BLOCK_CONTEXT && lines[from - 1]?.trim()) from--;
    while (to < lines.length - 1 && to - h < BLOCK_CONTEXT && lines[to + 1]?.trim()) to++;
    const last = blocks[blocks.length - 1];
    if (last && from <= last.endLine) {
      // Overlapping or touching: grow the block before it.
      for (let i = last.endLine; i <= to; i++) last.text += `\n${windowed(lines[i] as string, needle, hitSet.has(i))}`;
      last.endLine = Math.max(last.endLine, to + 1);
      last.matches++;
      continue;
    }
    const text = lines.slice(from, to + 1).map((l, k) => windowed(l, needle, hitSet.has(from + k))).join('\n');
    blocks.push({ startLine: from + 1, endLine: to + 1, matches: 1, text, clipped: false });
  }
  for (const b of blocks) b.clipped = b.text.includes('…[line clipped');
  return blocks;
}

function windowed(line: string, needle: string, isHit: boolean): string {
  if (line.length <= LINE_WINDOW) return line;
  const at = isHit ? Math.max(0, line.toLowerCase().indexOf(needle)) : 0;
  const from = Math.max(0, at - LINE_WINDOW / 2);
  return `${from > 0 ? '…' : ''}${line.slice(from, from + LINE_WINDOW)}…[line clipped: ${line.length} characters; read the line for all of it]`;
}

/** Keeps items in order while the JSON list of them fits the budget, measured exactly. */
function pack<T>(items: readonly T[], budget: number): { kept: T[]; used: number } {
  const kept: T[] = [];
  let estimate = 1;
  for (const item of items) {
    const cost = countTokens(JSON.stringify(item)) + 1;
    if (estimate + cost > budget) break;
    kept.push(item);
    estimate += cost;
  }
  let used = countTokens(JSON.stringify(kept));
  while (used > budget && kept.length) {
    kept.pop();
    used = countTokens(JSON.stringify(kept));
  }
  return { kept, used };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
