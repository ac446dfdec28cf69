import * as fs from 'node:fs';
import { z } from 'zod';
import type { EntryRow } from '../core/lookup/memoryLookup';
import { absolutePath, listVaultFiles, relPathProblem, vaultRoot } from '../core/memory/vault/vaultLayout';
import { isRefusal } from '../core/refusal';
import type { RemoteServices } from '../core/owner/serviceProxy';
import { ID_KINDS, RESOLVE_BATCH, type FactCard, type HostHandlers, type HostMethod, type IdList, type IdTarget, type ParamsOf } from '../server/protocol';

// No `vscode` here: the language-server tests answer the real server with these same handlers.

const LIMIT = z.number().int().min(1).max(500);
const TEXT = z.string().max(1_000);

/** The server is our own code, but what crosses a process boundary is checked, not trusted. */
const PARAMS: { [M in HostMethod]: z.ZodType<ParamsOf<M>> } = {
  'recollect/entities': z.object({ prefix: TEXT, limit: LIMIT }),
  'recollect/predicates': z.object({ prefix: TEXT, limit: LIMIT }),
  'recollect/ids': z.object({ kind: z.enum(ID_KINDS), prefix: TEXT, limit: LIMIT }),
  'recollect/fact': z.object({ id: TEXT.optional(), subjects: z.array(TEXT).max(64).optional() }),
  'recollect/resolveIds': z.object({ ids: z.array(TEXT).max(RESOLVE_BATCH) }),
};

/** Checks a request's parameters against its method's schema; throws with the reason when they do not fit. */
export function checkParams<M extends HostMethod>(method: M, params: unknown): ParamsOf<M> {
  const parsed = PARAMS[method].safeParse(params);
  if (!parsed.success) throw new Error(`${method}: bad parameters: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** One request, checked and answered; the generic keeps each method's params and result together. */
export function answerHostRequest<M extends HostMethod>(handlers: HostHandlers, method: M, params: unknown) {
  const handler: HostHandlers[M] = handlers[method];
  return handler(checkParams(method, params));
}

/** Answers the language server's data requests from the store (this process's, or its owner's); vault files are read here. */
export function notesDataHandlers(services: RemoteServices, home: string): HostHandlers {
  const lookup = services.lookup;
  const vault = vaultRoot(home);

  return {
    'recollect/entities': ({ prefix, limit }) => lookup.entities(prefix, limit),
    'recollect/predicates': ({ prefix, limit }) => lookup.predicates(prefix, limit),
    'recollect/ids': async ({ kind, prefix, limit }): Promise<IdList> => {
      if (kind === 'fact') return lookup.factIds(prefix, limit);
      if (kind === 'entry') return lookup.entryIds(`entry:${prefix}`, limit);
      // Files not indexed yet are notes too: index_memory takes them in on its next run.
      const onDisk = listVaultFiles(vault).map((f) => f.path).filter((p) => p.startsWith(prefix));
      const paths = [...new Set([...(await lookup.notePaths(prefix, limit + 1)), ...onDisk])].sort();
      return { items: paths.slice(0, limit).map((p) => ({ id: `note:${p}`, detail: absolutePath(vault, p) })), more: paths.length > limit };
    },
    'recollect/fact': async ({ id, subjects }): Promise<FactCard | null> => {
      if (id !== undefined) {
        const key = await lookup.factKey(id);
        if (!key) return null;
        const card = await history(services, key.subject, key.predicate, key.scope);
        return card && { ...card, id };
      }
      const subject = await lookup.firstKnownSubject(subjects ?? []);
      return subject === undefined ? null : history(services, subject);
    },
    'recollect/resolveIds': async ({ ids }) => {
      const files = new Map<string, string[] | undefined>();
      const linesOf = (file: string) => {
        if (!files.has(file)) files.set(file, readLines(file));
        return files.get(file);
      };
      return { results: await Promise.all(ids.map((id) => resolve(id, lookup, vault, linesOf))) };
    },
  };
}

async function history(services: RemoteServices, subject: string, predicate?: string, scope?: string): Promise<FactCard | null> {
  const found = await services.memory.retrieve({ subject, predicate, scope, include_history: true });
  if (isRefusal(found) || !found.values.length) return null;
  // Current values lead; within each group the ledger's newest-first order stays.
  const values = [...found.values.filter((v) => v.status === 'current'), ...found.values.filter((v) => v.status !== 'current')];
  return {
    subject: found.values[0]?.subject ?? subject,
    values: values.map((v) => ({ id: v.id, predicate: v.predicate, object: v.object, scope: v.scope, source: v.source, recorded_at: v.recorded_at, status: v.status, superseded_at: v.superseded_at })),
  };
}

async function resolve(id: string, lookup: RemoteServices['lookup'], vault: string, linesOf: (file: string) => string[] | undefined): Promise<IdTarget> {
  if (id.startsWith('fact:')) {
    const key = await lookup.factKey(id);
    if (!key) return { id, exists: false };
    // A fact saved with a sentence lives on as that note entry; definition goes there.
    const entry = await lookup.entryOfFact(id);
    const at = entry ? entryLocation(entry, vault, linesOf) : {};
    return { id, exists: true, retired: key.retired, detail: `${key.subject} · ${key.predicate} (${key.scope})`, ...at };
  }
  if (id.startsWith('entry:')) {
    const entry = await lookup.entry(id);
    if (!entry) return { id, exists: false };
    return { id, exists: true, retired: entry.retired, detail: entry.path, ...(entry.retired ? {} : entryLocation(entry, vault, linesOf)) };
  }
  if (id.startsWith('note:')) {
    const rel = id.slice('note:'.length);
    const problem = relPathProblem(rel);
    if (problem) return { id, exists: false, detail: problem };
    const file = absolutePath(vault, rel);
    if (isFile(file)) return { id, exists: true, detail: rel, file, line: 0 };
    const known = await lookup.notePath(rel);
    return known ? { id, exists: true, retired: known.retired, detail: rel } : { id, exists: false };
  }
  return { id, exists: false, detail: 'not a fact:, entry: or note: id' };
}

/** The entry's line in its day file: the heading carrying its anchor, else the line holding its text. */
function entryLocation(entry: EntryRow, vault: string, linesOf: (file: string) => string[] | undefined): { file?: string; line?: number } {
  if (relPathProblem(entry.path)) return {};
  const file = absolutePath(vault, entry.path);
  const lines = linesOf(file);
  if (!lines) return {};
  const hash = entry.id.slice(entry.id.lastIndexOf('#') + 1);
  const firstLine = entry.text.split('\n', 1)[0]?.trim() ?? '';
  let line = hash ? lines.findIndex((l) => l.includes(hash)) : -1;
  if (line === -1 && firstLine) line = lines.findIndex((l) => l.includes(firstLine));
  return { file, line: Math.max(0, line) };
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function readLines(file: string): string[] | undefined {
  try {
    return fs.readFileSync(file, 'utf8').split(/\r?\n/);
  } catch {
    return undefined;
  }
}
