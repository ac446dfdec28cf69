import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ActivityPage } from '../core/activity/activityLog';
import { activityText } from '../core/activity/activityText';
import type { ImportReport } from '../core/history/importer';
import { vaultRoot } from '../core/memory/vault/vaultLayout';
import type { RemoteServices } from '../core/owner/serviceProxy';
import type { StoreRole } from '../core/tools/toolDefinition';
import type { StoreAccess } from '../core/owner/storeAccess';
import { MCP_FORMAT_LABELS, mcpCommand, type McpCommandFormat } from './mcpCommand';
import type { StatusBar } from './statusBar';
import { formatBytes, storeSizeOnDisk } from './storeSize';
import { forgetCommands } from './forgetCommands';
import { exportMemoryCommand, importMemoryCommand } from './transferCommands';

interface CommandDeps {
  services: Promise<RemoteServices>;
  /** Who owns the store and whether this window is it. */
  storeRole(): StoreRole;
  /** The store's tools, run by whichever process owns it. */
  store: StoreAccess;
  log: vscode.LogOutputChannel;
  home: string;
  extensionPath: string;
  status: StatusBar;
  importNow(): Promise<ImportReport>;
}

/** The view id VS Code derives `<id>.focus` from (package.json contributes.views). */
const MEMORY_VIEW_FOCUS = 'recollect.memory.focus';

/** The command palette, as a table: id → what it does. package.json names the same ids. */
export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const activity = new ActivityDocument(deps.home);
  const table: Record<string, (...args: unknown[]) => unknown> = {
    'recollect.showLog': () => deps.log.show(),
    'recollect.openStoreFolder': () => vscode.env.openExternal(vscode.Uri.file(deps.home)),
    'recollect.showMemory': () => vscode.commands.executeCommand(MEMORY_VIEW_FOCUS),
    'recollect.importNow': async () => {
      const r = await deps.status.during('Importing chat history', Promise.resolve(vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Recollect: importing chat history…' },
        () => deps.importNow(),
      )));
      const problems = r.problems.length ? ` ${r.problems.length} problems (see the log).` : '';
      void vscode.window.showInformationMessage(`Recollect: ${r.events} new events in ${r.sessions} sessions from ${r.files} files.${problems}`);
      return r;
    },
    'recollect.showStatus': async () => {
      const services = await deps.services;
      const [status, history, size] = await Promise.all([services.memory.status(), services.history.counts(), storeSizeOnDisk(deps.home)]);
      const role = deps.storeRole();
      const owner = `; owner: process ${role.owner.pid} (${role.owner.kind}), this window ${role.this_process === 'owner' ? 'is the owner' : 'is its client'}`;
      const text = `Recollect: ${status.facts} facts (${status.current_facts} current), ${status.entries} note entries, ${status.entities} entities, ${history.sessions} sessions — store ${deps.home} (${formatBytes(size.bytes)})${owner}`;
      void vscode.window.showInformationMessage(text);
      return { ...status, sessions: history.sessions, bytes: size.bytes, store_owner: role };
    },
    'recollect.showActivity': () => showActivity(deps, activity),
    'recollect.rebuildIndex': () => rebuildIndex(deps),
    ...forgetCommands(deps),
    'recollect.exportMemory': (arg?: unknown) => exportMemoryCommand(deps, arg),
    'recollect.importMemory': () => importMemoryCommand(deps),
    'recollect.copyMcpCommand': (format?: unknown) => copyMcpCommand(deps, typeof format === 'string' && format in MCP_FORMAT_LABELS ? (format as McpCommandFormat) : 'shell'),
    'recollect.openVaultFolder': async () => {
      const vault = vaultRoot(deps.home);
      if (!fs.existsSync(vault)) {
        void vscode.window.showInformationMessage(`Recollect: there is no vault yet at ${vault}. Notes are written there once memory saves its first one.`);
        return false;
      }
      await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(vault), { forceNewWindow: true });
      return true;
    },
  };
  return [
    activity,
    vscode.workspace.registerTextDocumentContentProvider(ACTIVITY_URI.scheme, activity),
    ...Object.entries(table).map(([id, run]) => vscode.commands.registerCommand(id, run)),
  ];
}

/** How many of the newest calls the activity document shows: enough for a person to find a call, small enough to open at once. */
const ACTIVITY_SHOWN = 500;

/** A read-only virtual document, so closing it never asks to save; each command run reads the log afresh. */
const ACTIVITY_URI = vscode.Uri.from({ scheme: 'recollect-activity', path: '/Recollect Activity.log' });

class ActivityDocument implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** The page the document shows, read by the command just before it opens or refreshes the document. */
  page: ActivityPage = { rows: [], total: 0, unreadable: 0 };

  constructor(private readonly home: string) {}

  provideTextDocumentContent(): string {
    return activityText(this.page, this.home);
  }

  refresh(page: ActivityPage): void {
    this.page = page;
    this.changed.fire(ACTIVITY_URI);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** Opens Recollect's own recent tool calls; returns what it showed. */
async function showActivity(deps: CommandDeps, view: ActivityDocument) {
  const page = await (await deps.services).activity.recent(ACTIVITY_SHOWN);
  view.refresh(page);
  const doc = await vscode.workspace.openTextDocument(ACTIVITY_URI);
  await vscode.window.showTextDocument(doc, { preview: true });
  return page;
}

/** Replays the journal into a fresh database and search index, with progress, and says what it found. */
async function rebuildIndex(deps: CommandDeps) {
  const services = await deps.services;
  const started = Date.now();
  const result = await deps.status.during('Rebuilding the index', Promise.resolve(vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Recollect: rebuilding the database and search index from the journal…' },
    () => services.store.rebuild(),
  )));
  const ms = Date.now() - started;
  const [status, history] = await Promise.all([services.memory.status(), services.history.counts()]);
  const skipped = result.skippedLines ? ` ${result.skippedLines} journal lines could not be applied (see the log).` : '';
  deps.log.info(`rebuilt from ${result.journalBytes} journal bytes in ${ms} ms: ${status.facts} facts, ${status.entries} note entries, ${history.sessions} sessions; ${result.skippedLines} lines skipped`);
  void vscode.window.showInformationMessage(`Recollect rebuilt its index from ${formatBytes(result.journalBytes)} of journal in ${(ms / 1000).toFixed(1)} s: ${status.facts} facts, ${status.entries} note entries, ${history.sessions} sessions.${skipped}`);
  return { ...result, ms, facts: status.facts, entries: status.entries, sessions: history.sessions };
}

/** Copies how another agent starts the MCP server on this store; the message offers the other forms. */
async function copyMcpCommand(deps: CommandDeps, format: McpCommandFormat): Promise<string> {
  const launch = { cli: path.join(deps.extensionPath, 'dist', 'cli.js'), home: deps.home };
  const text = mcpCommand(format, launch);
  await vscode.env.clipboard.writeText(text);
  const others = (Object.keys(MCP_FORMAT_LABELS) as McpCommandFormat[]).filter((f) => f !== format);
  void vscode.window
    .showInformationMessage(`Recollect: copied the MCP command (${MCP_FORMAT_LABELS[format]}). Paste it where your agent configures MCP servers; it needs Node.js 20 or newer.`, 'Other Formats…')
    .then(async (pick) => {
      if (!pick) return;
      const chosen = await vscode.window.showQuickPick(others.map((f) => ({ label: MCP_FORMAT_LABELS[f], format: f })), { title: 'Copy the Recollect MCP command as…' });
      if (chosen) await vscode.commands.executeCommand('recollect.copyMcpCommand', chosen.format);
    });
  return text;
}
