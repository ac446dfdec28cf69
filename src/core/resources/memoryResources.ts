import { openArtifact } from '../chapters/artifact';
import { isRefusal, refuse, type Refusal } from '../refusal';
import type { Services } from '../services';
import { queryRows } from '../store/sqlite';

/**
 * What a person or an agent may attach from the memory, named by URI: a vault note
 * (recollect://note/<path>) and an archived chapter (recollect://chapter/<ch_id>). The MCP
 * server lists and reads them; tool results that name one link to it.
 */
export const NOTE_URI_PREFIX = 'recollect://note/';
export const CHAPTER_URI_PREFIX = 'recollect://chapter/';

export interface MemoryResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: 'text/markdown';
}

export interface ResourcePage {
  resources: MemoryResource[];
  /** Offset of the next page, absent on the last one. */
  next?: number;
}

export const noteUri = (path: string) => NOTE_URI_PREFIX + path.split('/').map(encodeURIComponent).join('/');
export const chapterUri = (id: string) => CHAPTER_URI_PREFIX + id;

/** Live vault notes by path, then archived chapters newest first, `limit` at a time from `offset`. */
export function listMemoryResources(services: Services, offset: number, limit: number): ResourcePage {
  // One more row than the page tells whether another page follows.
  const rows = queryRows(
    services.store.db,
    `SELECT kind, name, title, tokens FROM (
       SELECT 0 AS kind, path AS name, title, NULL AS tokens, NULL AS created_at FROM vault_files WHERE retired_at IS NULL
       UNION ALL
       SELECT 1, id, title, tokens, created_at FROM chapters
     ) ORDER BY kind, CASE kind WHEN 0 THEN name END, created_at DESC, name LIMIT ? OFFSET ?`,
    [limit + 1, offset],
  );
  const resources = rows.slice(0, limit).map((r): MemoryResource => {
    const name = String(r.name);
    if (Number(r.kind) === 0) return { uri: noteUri(name), name, ...(r.title !== null ? { title: String(r.title) } : {}), mimeType: 'text/markdown' };
    return { uri: chapterUri(name), name, title: String(r.title), description: `archived chapter, ${Number(r.tokens)} tokens`, mimeType: 'text/markdown' };
  });
  return rows.length > limit ? { resources, next: offset + limit } : { resources };
}

/** The Markdown a resource URI names, or a refusal that says why there is none. */
export function readMemoryResource(services: Services, uri: string): { text: string } | Refusal {
  if (uri.startsWith(CHAPTER_URI_PREFIX)) {
    const id = uri.slice(CHAPTER_URI_PREFIX.length);
    if (!/^ch_[0-9a-z]+$/.test(id)) return refuse(`${uri.slice(0, 200)} names no chapter: a chapter URI is ${CHAPTER_URI_PREFIX}ch_…`);
    const artifact = openArtifact(services.store, id);
    return isRefusal(artifact) ? artifact : { text: artifact.lines.join('\n') + '\n' };
  }
  if (uri.startsWith(NOTE_URI_PREFIX)) {
    let path: string;
    try {
      path = uri.slice(NOTE_URI_PREFIX.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      return refuse(`${uri.slice(0, 200)} is not a valid note URI (bad %-encoding)`);
    }
    const note = services.recall.readMemory(`note:${path}`) as Refusal | { ok: true; text?: string; entries?: { created_at: string; text: string }[] };
    if (isRefusal(note)) return note;
    if (typeof note.text === 'string') return { text: note.text };
    return { text: (note.entries ?? []).map((e) => `- ${e.created_at} ${e.text}`).join('\n') + '\n' };
  }
  return refuse(`${uri.slice(0, 200)} is not a Recollect resource: use ${NOTE_URI_PREFIX}<path> or ${CHAPTER_URI_PREFIX}<ch_id>`);
}

/**
 * The notes and chapters an answer names (`note:<path>` ids, `ch_…` ids), each once, at most
 * `max`: what a client may offer to attach beside the answer.
 */
export function resourcesNamedIn(result: unknown, max = 10): MemoryResource[] {
  const found = new Map<string, MemoryResource>();
  const visit = (v: unknown, depth: number): void => {
    if (found.size >= max || depth > 6) return;
    if (typeof v === 'string') {
      if (v.startsWith('note:') && !v.includes('#') && v.length < 600) {
        const path = v.slice(5);
        found.set(noteUri(path), { uri: noteUri(path), name: path, mimeType: 'text/markdown' });
      } else if (/^ch_[0-9a-z]{4,40}$/.test(v)) found.set(chapterUri(v), { uri: chapterUri(v), name: v, mimeType: 'text/markdown' });
      return;
    }
    if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) visit(x, depth + 1);
  };
  visit(result, 0);
  return [...found.values()];
}
