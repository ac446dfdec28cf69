/**
 * The daily-log file format. Each entry is a level-2 heading carrying its time, its source
 * and its stable anchor, then the text:
 *
 *   # 2026-11-01
 *
 *   ## 10:00 · claude-code #3f9a1c2b7d4e
 *
 *   We build with Vite 8
 *
 * The anchor is the `#<hash>` of the entry id `entry:<path>#<hash>`, so an id resolves to a
 * line a person can jump to. A heading is what VS Code's outline, folding and breadcrumbs
 * already understand, which is why the anchor lives there and not in an HTML comment.
 *
 * A person may edit the text under a heading (an edit), delete a whole block (the entry leaves
 * recall), or write a new `## ` heading of their own, or text above the first entry (a new
 * entry; indexing gives it an anchor). So that text can never be mistaken for a heading, an
 * entry line starting with `## ` is written with one more leading backslash than it had, and
 * read back with one fewer: Markdown shows `\## x` as the literal "## x", and the round trip
 * is exact.
 */
export const ANCHOR_LENGTH = 12;
const HEADING = /^## /;
const ANCHORED = / #([0-9a-f]{12})[ \t]*$/;
const TITLE = /^# \d{4}-\d{2}-\d{2}[ \t]*$/;
const ESCAPED = /^\\*## /;

export interface EntryBlock {
  anchor: string;
  at: number;
  timezone: string | null;
  source: string;
  text: string;
}

export function anchorOfId(entryId: string): string {
  return entryId.slice(entryId.lastIndexOf('#') + 1);
}

export function renderTitle(day: string): string {
  return `# ${day}\n`;
}

/** One entry as it is appended: a blank line, the heading, a blank line, the text. */
export function renderEntry(e: EntryBlock): string {
  const source = e.source.replace(/\s+/g, ' ').trim() || 'unknown';
  return `\n## ${clockIn(e.at, e.timezone)} · ${source} #${e.anchor}\n\n${escapeText(e.text)}\n`;
}

export function renderDailyFile(day: string, entries: readonly EntryBlock[]): string {
  return renderTitle(day) + entries.map(renderEntry).join('');
}

export interface Section {
  /** The anchor on the heading, or null for a heading a person wrote. */
  anchor: string | null;
  heading: string;
  text: string;
  startLine: number;
  /** Exclusive. */
  endLine: number;
}

export interface ParsedDaily {
  lines: string[];
  /** Text between the title and the first heading (a person's own addition when not blank). */
  preamble: { text: string; startLine: number; endLine: number };
  sections: Section[];
}

export function parseDailyFile(content: string): ParsedDaily {
  const lines = content.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  // A file that ends with a newline splits into a last empty string that is no line at all.
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const headings: number[] = [];
  lines.forEach((l, i) => {
    if (HEADING.test(l)) headings.push(i);
  });
  const firstBody = lines.length && TITLE.test(lines[0] as string) ? 1 : 0;
  const preambleEnd = headings[0] ?? lines.length;
  const sections = headings.map((start, k) => {
    const end = headings[k + 1] ?? lines.length;
    const heading = lines[start] as string;
    return { anchor: ANCHORED.exec(heading)?.[1] ?? null, heading, text: bodyText(lines.slice(start + 1, end)), startLine: start, endLine: end };
  });
  return { lines, preamble: { text: bodyText(lines.slice(firstBody, preambleEnd)), startLine: firstBody, endLine: preambleEnd }, sections };
}

/** The file without the block of one anchor; undefined when the anchor is not there. */
export function removeEntry(content: string, anchor: string): string | undefined {
  const parsed = parseDailyFile(content);
  const s = parsed.sections.find((x) => x.anchor === anchor);
  if (!s) return undefined;
  return joinLines([...parsed.lines.slice(0, s.startLine), ...parsed.lines.slice(s.endLine)]);
}

/** The file with a block put back before the section of `beforeAnchor`, or at the end. */
export function insertEntry(content: string, block: string, beforeAnchor: string | null): string {
  const parsed = parseDailyFile(content);
  const target = beforeAnchor === null ? undefined : parsed.sections.find((x) => x.anchor === beforeAnchor);
  if (!target) return ensureNewline(content) + block;
  const before = joinLines(parsed.lines.slice(0, target.startLine));
  // The rendered block starts with its own blank line and ends with the text's newline.
  return ensureNewline(before).replace(/\n\n$/, '\n') + block + '\n' + joinLines(parsed.lines.slice(target.startLine));
}

/**
 * Gives hand-written content its anchors: the preamble and each heading without an anchor are
 * replaced by rendered entries (in place, so nothing moves), everything else is kept byte for
 * byte apart from line endings.
 */
export function withAnchors(content: string, title: string, replacements: ReadonlyMap<number, string>): string {
  const parsed = parseDailyFile(content);
  const out: string[] = [title.trimEnd()];
  const put = (block: string) => {
    if (out[out.length - 1] !== '') out.push('');
    out.push(block.replace(/^\n+/, '').replace(/\n+$/, ''), '');
  };
  const preambleBlock = replacements.get(-1);
  if (preambleBlock !== undefined) put(preambleBlock);
  else out.push(...parsed.lines.slice(parsed.preamble.startLine, parsed.preamble.endLine));
  for (const s of parsed.sections) {
    const block = replacements.get(s.startLine);
    if (block !== undefined) put(block);
    else out.push(...parsed.lines.slice(s.startLine, s.endLine));
  }
  while (out.length > 1 && out[out.length - 1] === '') out.pop();
  return joinLines(out);
}

/** A heading a person wrote becomes part of their entry's text: the heading words, then the body. */
export function handWrittenText(s: Section): string {
  const title = s.heading.replace(HEADING, '').trim();
  return s.text ? (title ? `${title}\n\n${s.text}` : s.text) : title;
}

/** Compares an entry's stored text with its text in the file, ignoring what the format adds. */
export function sameText(a: string, b: string): boolean {
  return normalize(a) === normalize(b);
}

export function normalize(text: string): string {
  return text.replace(/\r\n/g, '\n').trim();
}

function escapeText(text: string): string {
  return normalize(text)
    .split('\n')
    .map((l) => (ESCAPED.test(l) ? `\\${l}` : l))
    .join('\n');
}

function bodyText(lines: string[]): string {
  let a = 0;
  let b = lines.length;
  while (a < b && !(lines[a] as string).trim()) a++;
  while (b > a && !(lines[b - 1] as string).trim()) b--;
  return lines
    .slice(a, b)
    .map((l) => (/^\\+## /.test(l) ? l.slice(1) : l))
    .join('\n');
}

function joinLines(lines: string[]): string {
  return lines.length ? lines.join('\n') + '\n' : '';
}

function ensureNewline(content: string): string {
  return content === '' || content.endsWith('\n') ? content : content + '\n';
}

/** HH:MM in a person's zone (IANA name or ±HH:MM offset); UTC when none was given. */
export function clockIn(at: number, timezone: string | null): string {
  const offset = timezone ? /^([+-])(\d{2}):?(\d{2})$/.exec(timezone) : null;
  if (!timezone || offset) {
    const minutes = offset ? (Number(offset[2]) * 60 + Number(offset[3])) * (offset[1] === '-' ? -1 : 1) : 0;
    return new Date(at + minutes * 60_000).toISOString().slice(11, 16);
  }
  try {
    return new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at);
  } catch {
    return new Date(at).toISOString().slice(11, 16);
  }
}
