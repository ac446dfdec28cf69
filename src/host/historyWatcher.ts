import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ImportReport } from '../core/history/importer';
import type { ToolOutputRetention } from '../core/history/retention';
import { agentTranscriptRoots, vscodeTranscriptRoots, type SourceSwitch, type TranscriptRoot } from '../core/history/locations';
import type { RemoteServices } from '../core/owner/serviceProxy';
import type { StatusBar } from './statusBar';

/** A first import with more files than this shows a progress notification. */
const LARGE_IMPORT_FILES = 50;
const RESCAN_MS = 30_000;
const DEBOUNCE_MS = 1_500;
/** Retention cut-offs move once a day (retention.ts), so it is looked at about as often. */
const RETENTION_EVERY_MS = 6 * 60 * 60 * 1000;

/** How the watcher imports: in this window while it owns the store, else by the owner (storeOwnership.ts). */
export interface HistoryImport {
  importPaths(paths: string[], globs: string[]): Promise<ImportReport>;
  /** Only the owner scans in the background: the folders are the same for every window, so one scan covers them all. */
  scans(): boolean;
}

/**
 * Imports transcripts in the background: at start, whenever a watched folder changes, and on
 * a slow timer (for folders a watcher cannot see). Unchanged files cost one stat each. A window
 * that is a client of another imports only when asked (a command, the chat participant).
 */
export class HistoryWatcher implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private running: Promise<ImportReport> | undefined;
  private pending = false;
  private debounce: NodeJS.Timeout | undefined;
  private first = true;
  private summariesStarted = false;
  private retainedAt = 0;
  private retainedSetting = '';

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly services: Promise<RemoteServices>,
    private readonly importer: HistoryImport,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: StatusBar,
  ) {
    const timer = setInterval(() => this.schedule(), RESCAN_MS);
    this.disposables.push({ dispose: () => clearInterval(timer) });
    this.disposables.push(vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('recollect.history') && this.schedule()));
    for (const root of this.roots()) {
      const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(root.path), '**/*.{json,jsonl}'));
      watcher.onDidChange(() => this.schedule());
      watcher.onDidCreate(() => this.schedule());
      this.disposables.push(watcher);
    }
  }

  /** Every folder this window imports from, with the setting that switches it. */
  roots(): TranscriptRoot[] {
    const config = vscode.workspace.getConfiguration('recollect.history');
    const enabled = config.get<Partial<Record<SourceSwitch, boolean>>>('sources') ?? {};
    const { workspaceStorage, globalStorage } = this.vscodeStorage();
    const extra = (config.get<string[]>('extraFolders') ?? []).map((p) => ({ path: p.replace(/^~(?=$|\/)/, os.homedir()), switch: 'vscode' as const, source: 'vscode-chat' as const }));
    // A folder that does not exist (yet) is simply not watched; it is looked for again on each scan.
    return [...vscodeTranscriptRoots(workspaceStorage, globalStorage), ...agentTranscriptRoots(os.homedir()), ...extra].filter(
      (r) => enabled[r.switch] !== false && fs.existsSync(r.path),
    );
  }

  /** This installation's storage folders: globalStorageUri sits in <user data>/User/globalStorage/<extension id>. */
  vscodeStorage(): { workspaceStorage: string; globalStorage: string } {
    const globalStorage = path.dirname(this.context.globalStorageUri.fsPath);
    return { globalStorage, workspaceStorage: path.join(path.dirname(globalStorage), 'workspaceStorage') };
  }

  /** Imports now; concurrent calls share one run and a call during a run queues one more. */
  importNow(): Promise<ImportReport> {
    if (this.running) {
      this.pending = true;
      return this.running;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.pending) {
        this.pending = false;
        void this.importNow();
      }
    });
    return this.running;
  }

  schedule(): void {
    if (!this.importer.scans()) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.importNow(), DEBOUNCE_MS);
  }

  /** The summary DAG catches up in the background: summarising never holds up an import or the editor. */
  private buildSummaries(services: RemoteServices): void {
    this.summariesStarted = true;
    services.lcm.buildAll().then(
      (r) => (r.leaves || r.condensed || r.removed) && this.log.info(`summaries: ${r.leaves} leaves and ${r.condensed} condensed built, ${r.removed} rebuilt, in ${r.sessions} sessions`),
      (err: unknown) => this.log.warn(`summaries: ${err instanceof Error ? err.message : String(err)}`),
    );
  }

  /** Drops raw tool outputs past their source's retention (a setting change is acted on at once); a failure is logged, never thrown into the import. */
  private async retain(services: RemoteServices, setting: ToolOutputRetention): Promise<void> {
    const key = JSON.stringify(setting);
    if (key === this.retainedSetting && Date.now() - this.retainedAt < RETENTION_EVERY_MS) return;
    this.retainedSetting = key;
    this.retainedAt = Date.now();
    try {
      for (const r of await services.forget.applyRetention(setting)) {
        this.log.info(`retention: the text of ${r.outputs} raw tool outputs was dropped (${r.blobs_deleted} blob files deleted); their events and summaries stay`);
        for (const w of r.warnings) this.log.warn(`retention: ${w}`);
      }
    } catch (err) {
      this.log.warn(`retention: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  dispose(): void {
    if (this.debounce) clearTimeout(this.debounce);
    for (const d of this.disposables) d.dispose();
  }

  private async run(): Promise<ImportReport> {
    const services = await this.services;
    const roots = this.roots().map((r) => r.path);
    const config = vscode.workspace.getConfiguration('recollect.history');
    const work = () => this.importer.importPaths(roots, config.get<string[]>('exclude') ?? []);
    const before = await services.history.counts();
    const report = this.first && before.sessions === 0
      ? await this.status.during('Importing chat history', Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Recollect: importing chat history…' }, work)))
      : await work();
    if (this.first && report.files - report.unchanged_files > LARGE_IMPORT_FILES) {
      void vscode.window.showInformationMessage(`Recollect imported ${report.sessions} sessions (${report.events} events) from ${report.files} files.`);
    }
    this.first = false;
    for (const p of report.problems.slice(0, 20)) this.log.warn(`import: ${p.file}${p.line ? `:${p.line}` : ''}: ${p.reason}`);
    if (report.events) this.log.info(`import: ${report.events} new events in ${report.sessions} sessions`);
    if (report.events || !this.summariesStarted) this.buildSummaries(services);
    await this.retain(services, config.get<ToolOutputRetention>('retention.toolOutputDays') ?? {});
    // An import that added nothing changes no figure; one that did also grew the store on disk.
    if (report.events || report.sessions) await this.status.refresh(true);
    return report;
  }
}
