/**
 * The few front-matter keys memory reads from a note: `title`, `aliases`, `tags`, `source`,
 * `date` / `session_date`. A deliberately small YAML subset (scalars, `[a, b]` lists and
 * `- item` lists): a note whose front matter uses more of YAML is still indexed in full as
 * text, only those keys are not understood.
 */
export interface FrontMatter {
  title?: string;
  aliases: string[];
  tags: string[];
  source?: string;
  /** Epoch ms of `session_date` or `date`, when it parses. */
  date?: number;
}

const FENCE = /^---[ \t]*\r?$/;

export function parseFrontMatter(content: string): FrontMatter {
  const out: FrontMatter = { aliases: [], tags: [] };
  const lines = content.split('\n');
  if (!FENCE.test(lines[0] ?? '')) return out;
  const end = lines.findIndex((l, i) => i > 0 && (FENCE.test(l) || /^\.\.\.[ \t]*\r?$/.test(l)));
  if (end < 0) return out;
  const fields = new Map<string, string[]>();
  let listKey: string | undefined;
  for (const raw of lines.slice(1, end)) {
    const line = raw.replace(/\r$/, '');
    const item = /^\s+-\s+(.*)$/.exec(line) ?? /^-\s+(.*)$/.exec(line);
    if (item && listKey) {
      fields.get(listKey)?.push(unquote(item[1] as string));
      continue;
    }
    const kv = /^([A-Za-z_][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (!kv) continue;
    const key = (kv[1] as string).toLowerCase();
    const value = (kv[2] as string).trim();
    if (value === '') {
      listKey = key;
      fields.set(key, []);
    } else {
      listKey = undefined;
      fields.set(key, inlineList(value));
    }
  }
  const first = (k: string) => fields.get(k)?.[0];
  const title = first('title');
  if (title) out.title = title;
  out.aliases = [...(fields.get('aliases') ?? []), ...(fields.get('alias') ?? [])].filter(Boolean);
  out.tags = [...(fields.get('tags') ?? []), ...(fields.get('tag') ?? [])].map((t) => t.replace(/^#/, '')).filter(Boolean);
  const source = first('source');
  if (source) out.source = source;
  const dateText = first('session_date') ?? first('date');
  if (dateText) {
    const ms = Date.parse(dateText);
    if (!Number.isNaN(ms)) out.date = ms;
  }
  return out;
}

/** `[a, "b c"]` → ["a", "b c"]; a plain scalar → [scalar]; a comma list stays one scalar. */
function inlineList(value: string): string[] {
  if (value.startsWith('[') && value.endsWith(']')) {
    return value
      .slice(1, -1)
      .split(',')
      .map((v) => unquote(v.trim()))
      .filter(Boolean);
  }
  return [unquote(value)];
}

function unquote(v: string): string {
  const t = v.replace(/\s+#.*$/, '').trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  return t;
}

/** Inline `#tags` in a note's text (not headings, not anchors, not inside code spans). */
export function inlineTags(text: string): string[] {
  const found = new Set<string>();
  for (const line of text.split('\n')) {
    if (/^\s*#{1,6}\s/.test(line) || /^\s*```/.test(line)) continue;
    for (const m of line.replace(/`[^`]*`/g, ' ').matchAll(/(?:^|\s)#(\p{L}[\p{L}\p{N}_/-]{0,60})/gu)) {
      const tag = m[1] as string;
      if (/^[0-9a-f]{12}$/.test(tag)) continue;
      found.add(tag.toLowerCase());
    }
  }
  return [...found];
}

/** The title a note is known by: front matter, else its first `# ` heading, else its file name. */
export function noteTitle(rel: string, content: string, fm: FrontMatter): string {
  if (fm.title) return fm.title;
  const heading = /^# (.+)$/m.exec(content);
  if (heading) return (heading[1] as string).trim();
  const base = rel.slice(rel.lastIndexOf('/') + 1).replace(/\.md$/, '');
  return base;
}
