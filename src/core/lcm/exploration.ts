import * as path from 'node:path';

/**
 * What a reader needs to decide whether to open a large output: its shape (JSON keys, code
 * declarations, headings, first lines) and where errors appear. Cheap and deterministic.
 */
const MIME_BY_EXT: Record<string, string> = {
  '.json': 'application/json', '.jsonl': 'application/x-ndjson', '.md': 'text/markdown', '.html': 'text/html', '.htm': 'text/html',
  '.ts': 'text/typescript', '.tsx': 'text/typescript', '.js': 'text/javascript', '.mjs': 'text/javascript', '.cjs': 'text/javascript',
  '.py': 'text/x-python', '.rs': 'text/x-rust', '.go': 'text/x-go', '.java': 'text/x-java', '.c': 'text/x-c', '.h': 'text/x-c',
  '.cpp': 'text/x-c++', '.cs': 'text/x-csharp', '.rb': 'text/x-ruby', '.sh': 'text/x-shellscript', '.css': 'text/css',
  '.csv': 'text/csv', '.yaml': 'application/yaml', '.yml': 'application/yaml', '.xml': 'application/xml', '.toml': 'application/toml',
  '.sql': 'application/sql', '.txt': 'text/plain', '.log': 'text/plain',
};

const PATH_KEYS = ['path', 'file_path', 'filePath', 'filename', 'fileName', 'file', 'uri', 'target_file', 'notebook_path'];

export function fileNameFor(eventId: number, toolName: string | null, toolInput: string | null, text: string): string {
  const fromInput = pathFromInput(toolInput);
  if (fromInput) return path.basename(fromInput);
  const ext = looksLikeJson(text) ? 'json' : 'txt';
  return `${(toolName ?? 'output').replace(/[^\w.-]+/g, '_')}-${eventId}.${ext}`;
}

export function mimeTypeFor(fileName: string, text: string): string {
  const known = MIME_BY_EXT[path.extname(fileName).toLowerCase()];
  if (known) return known;
  return looksLikeJson(text) ? 'application/json' : 'text/plain';
}

export function explore(text: string, fileName: string, tokens: number): string {
  const lines = text.split('\n');
  const out = [`${fileName}: ${lines.length} lines, ${Buffer.byteLength(text, 'utf8')} bytes, ${tokens} tokens.`];
  const json = parseJson(text);
  if (json !== undefined) out.push(describeJson(json));
  else {
    const decls = declarations(lines);
    if (decls.length) out.push(`Declares: ${decls.slice(0, 20).join(', ')}${decls.length > 20 ? ` and ${decls.length - 20} more` : ''}.`);
    const headings = lines.filter((l) => /^#{1,4} \S/.test(l)).map((l) => l.replace(/^#+ /, '').trim());
    if (headings.length) out.push(`Headings: ${headings.slice(0, 15).join(' | ')}${headings.length > 15 ? ' | …' : ''}.`);
  }
  const firstLines = lines.map((l) => l.trim()).filter(Boolean).slice(0, 3).map((l) => clip(l, 160));
  if (firstLines.length) out.push(`Begins: ${firstLines.join(' ⏎ ')}`);
  const last = lines.map((l) => l.trim()).filter(Boolean).at(-1);
  if (last && lines.length > 4) out.push(`Ends: ${clip(last, 160)}`);
  const errors = lines
    .map((l, i) => ({ l: l.trim(), i }))
    .filter(({ l }) => /\b(error|exception|failed|failure|traceback|panic)\b/i.test(l))
    .slice(0, 5)
    .map(({ l, i }) => `line ${i + 1}: ${clip(l, 140)}`);
  if (errors.length) out.push(`Error-like lines: ${errors.join('; ')}`);
  return out.join('\n');
}

function pathFromInput(toolInput: string | null): string | undefined {
  if (!toolInput) return undefined;
  try {
    const v = JSON.parse(toolInput) as unknown;
    if (typeof v !== 'object' || v === null) return undefined;
    for (const k of PATH_KEYS) {
      const p = (v as Record<string, unknown>)[k];
      if (typeof p === 'string' && p.trim() && p.length < 500) return p.replace(/^file:\/\//, '');
    }
  } catch {
    // Not JSON: no path to name the file after.
  }
  return undefined;
}

function looksLikeJson(text: string): boolean {
  return parseJson(text) !== undefined;
}

function parseJson(text: string): unknown {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function describeJson(value: unknown): string {
  if (Array.isArray(value)) {
    const first: unknown = value[0];
    const keys = first && typeof first === 'object' && !Array.isArray(first) ? Object.keys(first).slice(0, 15) : [];
    return `JSON array of ${value.length} items${keys.length ? `; items have keys ${keys.join(', ')}` : ''}.`;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    const shown = entries.slice(0, 20).map(([k, v]) => `${k} (${Array.isArray(v) ? `array of ${v.length}` : v === null ? 'null' : typeof v})`);
    return `JSON object with keys ${shown.join(', ')}${entries.length > 20 ? ` and ${entries.length - 20} more` : ''}.`;
  }
  return `JSON ${typeof value}.`;
}

const DECLARATION = /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|interface|type|enum|def|fn|func|struct|trait|impl)\s+([A-Za-z_$][\w$]*)/;

function declarations(lines: string[]): string[] {
  const names: string[] = [];
  for (const l of lines) {
    const m = DECLARATION.exec(l);
    if (m?.[1]) names.push(m[1]);
  }
  return [...new Set(names)];
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
