import * as fs from 'node:fs';
import * as path from 'node:path';
import { isRefusal, refuse, type Refusal } from '../core/refusal';
import type { StoreAccess } from '../core/owner/storeAccess';
import { findTool } from '../core/tools/registry';
import { IMPORT_BATCH_MAX_BYTES, IMPORT_MAX_FILES } from '../core/transfer/importCheck';

// No `vscode` here: the palette commands (transferCommands.ts) add only dialogs and progress, so
// the unit tests run this whole flow on a real store.

export type ToolCall = (name: string, input: object) => Promise<Record<string, unknown>>;

/** Calls a tool through the registry exactly as the MCP server and the CLI do (zod first, then the tool), in whichever process owns the store. */
export function toolCaller(store: StoreAccess, client: string, workspace?: string): ToolCall {
  return async (name, input) => {
    if (!findTool(name)) throw new Error(`no tool ${name}`);
    return (await store.callTool(name, input, { client, workspace })) as Record<string, unknown>;
  };
}

/** A safety stop: an export that has not finished after this many pages is not converging. */
const MAX_PAGES = 100_000;

export interface ExportedMemory {
  ok: true;
  document: string;
  pages: number;
  counts: unknown;
}

/** export_memory paged through every section; the pages concatenated are the whole document. */
export async function exportAll(call: ToolCall, onPage?: (page: { pages: number; section: string }) => void): Promise<ExportedMemory | Refusal> {
  const parts: string[] = [];
  let input: { section?: string; offset?: number } = {};
  let counts: unknown;
  for (let pages = 1; pages <= MAX_PAGES; pages++) {
    const r = await call('export_memory', input);
    if (isRefusal(r)) return r;
    parts.push(String(r.document ?? ''));
    counts ??= r.counts;
    onPage?.({ pages, section: String(input.section ?? 'ledger') });
    if (typeof r.nextSection !== 'string') return { ok: true, document: parts.join(''), pages, counts };
    input = { section: r.nextSection, offset: Number(r.nextItem ?? 0) };
  }
  return refuse(`export_memory had not finished after ${MAX_PAGES} pages; nothing was written`);
}

export interface MarkdownFile {
  relativePath: string;
  markdown: string;
}

export interface ImportSource {
  /** The folder name the notes go under (Imported/<label>/). */
  label: string;
  files: MarkdownFile[];
}

/** Folders a person never means to import: tool state, dependencies. */
const SKIPPED_FOLDER = /^(\.|node_modules$)/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The .md files a person picked: one folder (read recursively, paths relative to it) or some files
 * (named by their file names). A file that is not valid UTF-8 refuses the whole import by name:
 * decoding it leniently would import replacement characters in place of its text.
 */
export function readMarkdownSources(picked: readonly string[]): ImportSource | Refusal {
  if (!picked.length) return refuse('nothing was picked');
  const first = picked[0] as string;
  const isFolder = picked.length === 1 && fs.statSync(first).isDirectory();
  const found: { abs: string; rel: string }[] = [];
  if (isFolder) {
    const walk = (dir: string, rel: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.isDirectory() && !SKIPPED_FOLDER.test(entry.name)) walk(path.join(dir, entry.name), rel ? `${rel}/${entry.name}` : entry.name);
        else if (entry.isFile() && entry.name.toLowerCase().endsWith('.md')) found.push({ abs: path.join(dir, entry.name), rel: rel ? `${rel}/${entry.name}` : entry.name });
      }
    };
    walk(first, '');
  } else {
    for (const p of picked) if (p.toLowerCase().endsWith('.md')) found.push({ abs: p, rel: path.basename(p) });
  }
  if (!found.length) return refuse(`no .md files in ${isFolder ? first : 'what was picked'}; nothing was imported`);
  const files: MarkdownFile[] = [];
  for (const f of found) {
    try {
      files.push({ relativePath: f.rel, markdown: strictUtf8.decode(fs.readFileSync(f.abs)) });
    } catch {
      return refuse(`${f.abs} is not valid UTF-8 text; nothing was imported`);
    }
  }
  const base = path.basename(isFolder ? first : path.dirname(first)).replace(/[\\/]/g, '-').slice(0, 200);
  return { label: base || 'import', files };
}

/** Splits files into batches preview_import takes (file count and bytes per call); a file too large alone is left for the tool to refuse with its size. */
export function importBatches(files: readonly MarkdownFile[]): MarkdownFile[][] {
  const batches: MarkdownFile[][] = [];
  let current: MarkdownFile[] = [];
  let bytes = 0;
  for (const f of files) {
    const size = Buffer.byteLength(f.markdown, 'utf8') + Buffer.byteLength(f.relativePath, 'utf8');
    if (current.length && (current.length >= IMPORT_MAX_FILES || bytes + size > IMPORT_BATCH_MAX_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(f);
    bytes += size;
  }
  if (current.length) batches.push(current);
  return batches;
}

export interface ImportPreview {
  ok: true;
  label: string;
  folder: string;
  batchIds: string[];
  files: number;
  wouldCreate: string[];
  conflicts: string[];
  unchanged: string[];
  datesClamped: number;
}

/** preview_import for every batch. A refusal of any batch is the answer: nothing is applied. */
export async function previewImport(call: ToolCall, source: ImportSource): Promise<ImportPreview | Refusal> {
  const out: ImportPreview = { ok: true, label: source.label, folder: `Imported/${source.label}/`, batchIds: [], files: source.files.length, wouldCreate: [], conflicts: [], unchanged: [], datesClamped: 0 };
  const batches = importBatches(source.files);
  for (const [i, files] of batches.entries()) {
    const r = await call('preview_import', { label: source.label, files });
    if (isRefusal(r)) return batches.length > 1 ? refuse(`batch ${i + 1} of ${batches.length}: ${r.reason}`, r.budget) : r;
    out.batchIds.push(String(r.batchId));
    out.folder = String(r.folder ?? out.folder);
    out.wouldCreate.push(...strings(r.would_create));
    out.conflicts.push(...(Array.isArray(r.conflicts) ? r.conflicts.map((c) => String((c as { path?: unknown }).path)) : []));
    out.unchanged.push(...strings(r.unchanged));
    out.datesClamped += Array.isArray(r.dates_clamped) ? r.dates_clamped.length : 0;
  }
  return out;
}

/** apply_import for every previewed batch; what each created and kept is summed. */
export async function applyImport(call: ToolCall, batchIds: readonly string[]): Promise<{ ok: true; created: number; conflicts: string[] } | Refusal> {
  let created = 0;
  const conflicts: string[] = [];
  for (const batchId of batchIds) {
    const r = await call('apply_import', { batchId });
    if (isRefusal(r)) return r;
    created += Array.isArray(r.created) ? r.created.length : Number(r.created ?? 0);
    conflicts.push(...(Array.isArray(r.conflicts) ? r.conflicts.map((c) => String((c as { path?: unknown }).path)) : []));
  }
  return { ok: true, created, conflicts };
}

/** undo_import for every applied batch. */
export async function undoImport(call: ToolCall, batchIds: readonly string[]): Promise<{ ok: true; retired: number } | Refusal> {
  let retired = 0;
  for (const batchId of batchIds) {
    const r = await call('undo_import', { batchId });
    if (isRefusal(r)) return r;
    retired += Array.isArray(r.retired) ? r.retired.length : Number(r.retired ?? 0);
  }
  return { ok: true, retired };
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}
