/**
 * The `renor-export/v1` document: Markdown a person can read, and that `restore` reads back
 * exactly. Each item is a `### <kind> <id>` heading, its metadata as a fenced JSON block, and
 * (for notes) the note's text in a fenced block. A fence is always longer than the longest run of
 * backticks inside what it wraps, so no content can close it early (the CommonMark rule).
 */
export const EXPORT_FORMAT = 'renor-export/v1';

export const SECTIONS = ['ledger', 'daily-entries', 'notes', 'retired'] as const;
export type Section = (typeof SECTIONS)[number];

export type ItemKind = 'fact' | 'entry' | 'note';

export interface ExportItem {
  kind: ItemKind;
  id: string;
  /** Every stored column that is not derived (index ids, normalised keys are rebuilt). */
  meta: Record<string, unknown>;
  /** A note's full text. */
  body?: string | undefined;
}

export interface ParsedItem extends ExportItem {
  section: Section;
}

export function documentHeader(): string {
  return `# ${EXPORT_FORMAT}\n\nEverything this memory holds: the fact ledger as stored (superseded values included), every daily-log entry, every note in full, and everything retired. Times are epoch milliseconds (UTC) with an ISO copy beside them. Search indexes and embeddings are not exported: they are rebuilt from this text.\n\n`;
}

export function sectionHeading(section: Section): string {
  return `## ${section}\n\n`;
}

export function renderItem(item: ExportItem): string {
  let out = `### ${item.kind} ${item.id}\n\n${fenced(JSON.stringify(item.meta, null, 2), 'json')}\n`;
  if (item.body !== undefined) out += `${fenced(item.body, 'markdown')}\n`;
  return out;
}

function fenced(content: string, info: string): string {
  const longest = Math.max(0, ...[...content.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${content}\n${fence}\n`;
}

/** Reads a whole document (or the pages of one, concatenated) back into items. */
export function parseDocument(text: string): { items: ParsedItem[] } | { problem: string } {
  const lines = text.split('\n');
  if (lines[0] !== `# ${EXPORT_FORMAT}`) return { problem: `the document does not start with "# ${EXPORT_FORMAT}"` };
  const items: ParsedItem[] = [];
  let section: Section | undefined;
  let i = 1;
  const block = (info: string): string | { problem: string } => {
    while (i < lines.length && lines[i] === '') i++;
    const open = new RegExp(`^(\`{3,})${info}$`).exec(lines[i] ?? '');
    if (!open) return { problem: `line ${i + 1}: expected a \`\`\`${info} block` };
    const fence = open[1] as string;
    const start = ++i;
    while (i < lines.length && lines[i] !== fence) i++;
    if (i >= lines.length) return { problem: `line ${start}: the ${info} block is never closed` };
    return lines.slice(start, i++).join('\n');
  };
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    const sec = /^## (\S+)$/.exec(line);
    if (sec) {
      if (!(SECTIONS as readonly string[]).includes(sec[1] as string)) return { problem: `line ${i + 1}: unknown section "${sec[1]}"` };
      section = sec[1] as Section;
      continue;
    }
    const head = /^### (fact|entry|note) (.+)$/.exec(line);
    if (!head) continue;
    if (!section) return { problem: `line ${i + 1}: an item before any section heading` };
    const kind = head[1] as ItemKind;
    i++;
    const json = block('json');
    if (typeof json !== 'string') return json;
    let meta: unknown;
    try {
      meta = JSON.parse(json);
    } catch (err) {
      return { problem: `item ${head[2]}: its metadata is not JSON (${(err as Error).message})` };
    }
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return { problem: `item ${head[2]}: its metadata is not an object` };
    let body: string | undefined;
    if (kind === 'note') {
      const b = block('markdown');
      if (typeof b !== 'string') return b;
      body = b;
    }
    i--; // the loop's i++ moves past the closing fence
    items.push({ section, kind, id: head[2] as string, meta: meta as Record<string, unknown>, ...(body !== undefined ? { body } : {}) });
  }
  return { items };
}
