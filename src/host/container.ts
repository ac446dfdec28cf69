import { replayProgressLines } from '../core/store/replayProgress';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { semanticConfigFrom } from '../core/memory/semantic/semanticConfig';
import { redactionSettingsFrom } from '../core/privacy/redactionSettings';
import { askLimitFrom } from '../core/requests/requestService';
import { openServices, type Services } from '../core/services';
import { resolveStoreHome } from '../core/store/home';
import { warmTokenizer } from '../core/text/tokens';
import { findTool } from '../core/tools/registry';
import type { StoreRole, ToolFamily } from '../core/tools/toolDefinition';
import { emptyReport, type ImportReport } from '../core/history/importer';
import { ExcludeGlobs } from '../core/history/excludeGlobs';
import { registerChapters } from './chaptersCommands';
import { offeringOpener } from './openNextSession';
import { callToolHere } from './toolCall';
import { registerCommands } from './commands';
import { HistoryWatcher } from './historyWatcher';
import { createDecisionModel } from './decisionModelPort';
import { createLanguageModelPort } from './languageModelPort';
import { NotesLanguageClient } from './languageClient';
import { registerMemoryView } from './memoryView';
import { registerSessionHistory } from './historyPanel';
import { registerRulesReview } from './rulesPanel';
import { showSemanticProgress } from './semanticProgress';
import { StatusBar } from './statusBar';
import { joinStoreAsHost } from './storeOwnership';
import { mcpSessionHook } from '../cli/mcpSession';
import { registerTeamPool } from './teamPool';
import { registerToolSurface } from './toolSurface';

let storeClosing: Promise<void> | undefined;
let closeStore: (() => Promise<void>) | undefined;

/** Closes the store (an owner's clients hang up first, at most 2 s) and resolves once it is closed. */
export function storeClosed(): Promise<void> {
  return closeStore?.() ?? Promise.resolve();
}

/** What the extension exports: used by the end-to-end tests and by other extensions. */
export interface RecollectApi {
  /** This window's own services, when it owns the store (a window that is another's client holds none). */
  services: Promise<Services>;
  invoke(name: string, input: unknown): Promise<object>;
  /** Who owns the store and whether this window is it. */
  storeRole(): StoreRole;
  /** Imports every watched transcript folder now. */
  importNow(): Promise<ImportReport>;
  historyRoots(): string[];
  vscodeStorage(): { workspaceStorage: string; globalStorage: string };
}

/**
 * Composes the extension. The store opens in the background so VS Code's start never waits
 * on it; everything that needs it awaits the same promise, and a failure is shown once with
 * the reason and kept in the Recollect output channel.
 */
export function startRecollect(context: vscode.ExtensionContext): RecollectApi {
  const log = vscode.window.createOutputChannel('Recollect', { log: true });
  context.subscriptions.push(log);
  const config = () => vscode.workspace.getConfiguration('recollect');
  const home = resolveStoreHome({ setting: config().get<string>('storePath') });

  const distDir = path.join(context.extensionPath, 'dist');
  const embeddings = semanticConfigFrom(process.env, { url: config().get<string>('embeddings.url'), model: config().get<string>('embeddings.model') }, distDir);
  const memoryBudgetMb = config().get<number>('memory.budgetMb');
  const open = () => openServices({ home, wasmPath: path.join(distDir, 'sql-wasm.wasm'), onReplayProgress: replayProgressLines((line) => log.info(line)), ...(memoryBudgetMb ? { memoryBudgetMb } : {}) }, {
    languageModel: createLanguageModelPort(context, log),
    decisionModel: createDecisionModel(context, log),
    embeddings,
    semanticBackground: true,
    // Read on each ask, so a changed setting applies without a reload.
    askLimitPerHour: () => askLimitFrom(config().get<number>('requests.askLimitPerHour')),
    // Read on each write too, so a pattern added or a scope switched off applies to the next one.
    redaction: () => redactionSettingsFrom({ extraPatterns: config().get('redaction.extraPatterns'), disabledScopes: config().get('redaction.disabledScopes') }),
  });
  const build = String(context.extension.packageJSON.version ?? '');
  // While this window owns the store it runs the MCP session of each `recollect mcp` relaying to it (cli/mcpRelay.ts).
  const store = joinStoreAsHost({ home, build, open, log, mcpSession: mcpSessionHook(build) });
  // The views, commands, tools and language server all go through this, in the owner as in a client.
  const services = store.services;
  // Closing the window closes the store, or leaves it to the next owner. VS Code calls deactivate
  // (which waits for it) before it disposes the subscriptions; either starts it, once.
  closeStore = () => (storeClosing ??= store.close());
  context.subscriptions.push({ dispose: () => void closeStore?.() });
  // What only the store's owner has: its store's warnings and the background indexing's progress.
  store.whenOwner((s) => {
    log.info(`store open at ${home}`);
    for (const w of s.store.warnings) log.warn(w);
    if (s.store.warnings.length) void vscode.window.showWarningMessage(`Recollect: ${s.store.warnings[0]}`, 'Show Log').then((pick) => pick && log.show());
    context.subscriptions.push(showSemanticProgress(s, log));
    const sem = s.semantic.state();
    log.info(sem.model ? `semantic recall: ${sem.provider} model ${sem.model} (${sem.source})` : `semantic recall is off: ${sem.reason}`);
  });
  services.then(
    () => undefined,
    (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      log.error(`store failed to open at ${home}: ${message}`);
      void vscode.window.showErrorMessage(`Recollect could not open its memory store: ${message}`, 'Show Log').then((pick) => pick && log.show());
    },
  );

  const status = new StatusBar(services, home);
  context.subscriptions.push(status);
  const importPaths = async (paths: string[], globs: string[]): Promise<ImportReport> => {
    const own = store.link.ownServices();
    if (own) return (await own).importer.importPaths(paths, emptyReport(), new ExcludeGlobs(globs));
    // A client: the owner imports (and builds the summaries of what it imported).
    return (await store.link.call({ op: 'import', paths, globs })) as ImportReport;
  };
  const watcher = new HistoryWatcher(context, services, { importPaths, scans: () => store.link.isOwner }, log, status);
  context.subscriptions.push(watcher);
  services.then(() => {
    watcher.schedule();
    warmTokenizer(5_000);
  }, () => undefined);

  const workspace = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const familyEnabled = (family: ToolFamily) => config().get<Record<string, boolean>>('toolFamilies')?.[family] !== false;
  const version = String(context.extension.packageJSON.version ?? '');
  // A tool called in this window offers its next session (chapters_continue, chapters_fork) here.
  const opener = offeringOpener();
  context.subscriptions.push(registerToolSurface({ store: store.link, opener, familyEnabled, workspace, extensionPath: context.extensionPath, home, version, log }));
  context.subscriptions.push(...registerCommands({ services, storeRole: () => store.link.storeRole(), store: store.link, log, home, extensionPath: context.extensionPath, status, importNow: () => watcher.importNow() }));
  context.subscriptions.push(new NotesLanguageClient(context, services, home, log));
  context.subscriptions.push(registerMemoryView(context, services, home));
  context.subscriptions.push(...registerChapters(context, { services, whenOwner: store.whenOwner, log, importNow: () => watcher.importNow() }));
  context.subscriptions.push(...registerTeamPool(context, { own: store.ownNow, whenOwner: store.whenOwner, home, log, onStatus: (s) => status.setPool(s) }));
  context.subscriptions.push(...registerSessionHistory(context, services), ...registerRulesReview(context, services, store.whenOwner, () => void status.refresh()));

  return {
    services: store.own,
    async invoke(name, input) {
      if (!findTool(name)) throw new Error(`unknown tool ${name}`);
      return callToolHere(store.link, opener, name, input, { client: 'vscode-extension', workspace: workspace() });
    },
    storeRole: () => store.link.storeRole(),
    importNow: () => watcher.importNow(),
    historyRoots: () => watcher.roots().map((r) => r.path),
    vscodeStorage: () => watcher.vscodeStorage(),
  };
}
