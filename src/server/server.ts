import { pathToFileURL } from 'node:url';
import {
  CompletionItemKind,
  createConnection,
  ProposedFeatures,
  TextDocuments,
  TextDocumentSyncKind,
  type CompletionItem,
  type CompletionList,
  type Hover,
  type InitializeResult,
  type Location,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { normalizeKey } from '../core/text/textRules';
import { idRefs, localProblems, unknownIdProblems } from './checks';
import { renderFactCard, renderIdTarget } from './factCard';
import { completionContext, frontMatter, idAt, subjectCandidates, type CompletionContext } from './noteSyntax';
import { RESOLVE_BATCH, STORE_CHANGED, type HostMethod, type IdTarget, type ParamsOf, type ResultOf, type ServerInitOptions } from './protocol';

/**
 * The notes language server: its own process, started by the extension (node IPC) or by a test
 * (--stdio). It keeps no store; every name, id and fact is asked of the extension host.
 */

const COMPLETION_LIMIT = 100;
/** Typing fast should not ask the host once per keystroke. */
const VALIDATE_DELAY_MS = 250;

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
let options: ServerInitOptions | undefined;

function ask<M extends HostMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  return connection.sendRequest(method, params);
}

connection.onInitialize((params): InitializeResult => {
  const init = params.initializationOptions as Partial<ServerInitOptions> | undefined;
  if (typeof init?.statementMax !== 'number' || typeof init.storeHome !== 'string') {
    throw new Error('initializationOptions must carry statementMax and storeHome (see src/server/protocol.ts)');
  }
  options = { statementMax: init.statementMax, storeHome: init.storeHome };
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      completionProvider: { triggerCharacters: [':', '[', '#'] },
      hoverProvider: true,
      definitionProvider: true,
    },
    serverInfo: { name: 'recollect-notes' },
  };
});

const lines = (doc: TextDocument) => doc.getText().split(/\r?\n/);
const opts = () => {
  if (!options) throw new Error('not initialized');
  return options;
};

// ---------------------------------------------------------------- diagnostics

const pending = new Map<string, NodeJS.Timeout>();

function schedule(uri: string, delay = VALIDATE_DELAY_MS): void {
  clearTimeout(pending.get(uri));
  pending.set(uri, setTimeout(() => {
    pending.delete(uri);
    void validate(uri);
  }, delay));
}

async function resolveAll(ids: readonly string[]): Promise<Map<string, IdTarget>> {
  const out = new Map<string, IdTarget>();
  for (let i = 0; i < ids.length; i += RESOLVE_BATCH) {
    const { results } = await ask('recollect/resolveIds', { ids: ids.slice(i, i + RESOLVE_BATCH) });
    for (const t of results) out.set(t.id, t);
  }
  return out;
}

async function validate(uri: string): Promise<void> {
  const doc = documents.get(uri);
  if (!doc) return;
  const version = doc.version;
  const text = lines(doc);
  const diagnostics = localProblems(text, { statementMax: opts().statementMax, now: Date.now() });
  const refs = idRefs(text);
  if (refs.length) {
    try {
      const targets = await resolveAll([...new Set(refs.map((r) => r.id))]);
      diagnostics.push(...unknownIdProblems(refs, targets, opts().storeHome));
    } catch (err) {
      // The store may have failed to open; the local checks still stand.
      connection.console.warn(`ids in ${uri} not checked: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  // An edit that arrived meanwhile has its own check queued; do not publish stale marks over it.
  if (documents.get(uri)?.version !== version) return;
  await connection.sendDiagnostics({ uri, version, diagnostics });
}

const validateAll = () => {
  for (const doc of documents.all()) schedule(doc.uri, 0);
};

documents.onDidChangeContent((e) => schedule(e.document.uri));
documents.onDidClose((e) => {
  clearTimeout(pending.get(e.document.uri));
  pending.delete(e.document.uri);
  void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
});
connection.onNotification(STORE_CHANGED, validateAll);
connection.onDidChangeWatchedFiles(validateAll);

// ---------------------------------------------------------------- completion

function frontMatterFieldAt(text: string[], line: number) {
  const fm = frontMatter(text);
  return fm && line < fm.end ? fm.fields.find((f) => f.line === line) : undefined;
}

async function complete(ctx: CompletionContext, line: number, character: number): Promise<CompletionList> {
  const range = { start: { line, character: ctx.start }, end: { line, character } };
  if (ctx.type === 'id') {
    const found = await ask('recollect/ids', { kind: ctx.kind, prefix: ctx.prefix, limit: COMPLETION_LIMIT });
    const items = found.items.map((it): CompletionItem => ({
      label: it.id,
      kind: CompletionItemKind.Reference,
      detail: it.detail.length > 120 ? `${it.detail.slice(0, 120)}…` : it.detail,
      filterText: it.id,
      textEdit: { range, newText: it.id },
    }));
    return { isIncomplete: found.more, items };
  }
  const wantEntities = ctx.type !== 'predicate';
  const wantPredicates = ctx.type === 'predicate' || ctx.type === 'word';
  const [entities, predicates] = await Promise.all([
    wantEntities ? ask('recollect/entities', { prefix: ctx.prefix, limit: COMPLETION_LIMIT }) : undefined,
    wantPredicates ? ask('recollect/predicates', { prefix: ctx.prefix, limit: COMPLETION_LIMIT }) : undefined,
  ]);
  const items: CompletionItem[] = [];
  for (const e of entities?.items ?? []) {
    items.push({ label: e.name, kind: CompletionItemKind.Class, detail: `entity · ${e.count} fact${e.count === 1 ? '' : 's'}`, sortText: `0${e.name}`, textEdit: { range, newText: e.name } });
  }
  for (const p of predicates?.items ?? []) {
    items.push({ label: p.name, kind: CompletionItemKind.Property, detail: `predicate · used ${p.count}×`, sortText: `1${p.name}`, textEdit: { range, newText: p.name } });
  }
  return { isIncomplete: Boolean(entities?.more || predicates?.more), items };
}

connection.onCompletion(async ({ textDocument, position }) => {
  const doc = documents.get(textDocument.uri);
  if (!doc) return null;
  const text = lines(doc);
  const current = text[position.line] ?? '';
  const ctx = completionContext(current, position.character, frontMatterFieldAt(text, position.line)?.key);
  return complete(ctx, position.line, position.character);
});

// ---------------------------------------------------------------- hover and definition

connection.onHover(async ({ textDocument, position }): Promise<Hover | null> => {
  const doc = documents.get(textDocument.uri);
  if (!doc) return null;
  const text = lines(doc);
  const current = text[position.line] ?? '';
  const ref = idAt(current, position.line, position.character);
  if (ref) {
    const range = { start: { line: ref.line, character: ref.start }, end: { line: ref.line, character: ref.end } };
    const card = ref.kind === 'fact' ? await ask('recollect/fact', { id: ref.id }) : null;
    if (card) return { range, contents: { kind: 'markdown', value: renderFactCard(card) } };
    const [target] = (await ask('recollect/resolveIds', { ids: [ref.id] })).results;
    return target ? { range, contents: { kind: 'markdown', value: renderIdTarget(target, opts().storeHome) } } : null;
  }
  const phrases = subjectCandidates(current, position.character, frontMatterFieldAt(text, position.line)).slice(0, 64);
  if (!phrases.length) return null;
  const card = await ask('recollect/fact', { subjects: phrases.map((p) => p.text) });
  if (!card) return null;
  const matched = phrases.find((p) => normalizeKey(p.text) === normalizeKey(card.subject));
  const range = matched && { start: { line: position.line, character: matched.start }, end: { line: position.line, character: matched.end } };
  return { ...(range ? { range } : {}), contents: { kind: 'markdown', value: renderFactCard(card) } };
});

connection.onDefinition(async ({ textDocument, position }): Promise<Location | null> => {
  const doc = documents.get(textDocument.uri);
  const ref = doc && idAt(lines(doc)[position.line] ?? '', position.line, position.character);
  if (!ref) return null;
  const [target] = (await ask('recollect/resolveIds', { ids: [ref.id] })).results;
  if (!target?.file) return null;
  const line = target.line ?? 0;
  return { uri: pathToFileURL(target.file).href, range: { start: { line, character: 0 }, end: { line, character: 0 } } };
});

documents.listen(connection);
connection.listen();
