import * as vscode from 'vscode';
import type { RemoteServices } from '../core/owner/serviceProxy';
import { formatBytes, storeSizeOnDisk, type DiskSize } from './storeSize';
import type { PoolStatus } from '../core/pool/poolClient';
import { poolBadge } from './poolBadge';

/** Counts are two queries; the size is a folder walk, so it is taken less often. */
const COUNTS_MS = 15_000;
const SIZE_MS = 120_000;

/**
 * Recollect's one status-bar item: store size on disk, imported sessions and facts. A click
 * opens the memory browser. Others tell it when they changed something (an import, a rebuild)
 * and may show that work is under way.
 */
export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('recollect.status', vscode.StatusBarAlignment.Right, 50);
  private readonly timer: NodeJS.Timeout;
  private readonly configListener: vscode.Disposable;
  private size: DiskSize | undefined;
  private sizeAt = 0;
  private busy: string | undefined;
  private failed: string | undefined;
  private pool: PoolStatus | undefined;

  constructor(
    private readonly services: Promise<RemoteServices>,
    private readonly home: string,
  ) {
    this.item.name = 'Recollect';
    this.item.command = 'recollect.showMemory';
    this.item.text = '$(database) Recollect';
    this.timer = setInterval(() => void this.refresh(), COUNTS_MS);
    this.configListener = vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('recollect.statusBar') && void this.refresh());
    services.then(
      () => void this.refresh(true),
      (err: unknown) => {
        this.failed = err instanceof Error ? err.message : String(err);
        void this.refresh();
      },
    );
  }

  /** Shows `label` with a spinner while `work` runs, then refreshes the figures. */
  async during<T>(label: string, work: Promise<T>): Promise<T> {
    this.busy = label;
    this.render(undefined);
    try {
      return await work;
    } finally {
      this.busy = undefined;
      await this.refresh(true);
    }
  }

  /** The team pool's state (undefined: no pool), shown beside the counts. */
  setPool(status: PoolStatus | undefined): void {
    const shown = (s: PoolStatus | undefined) => (s ? poolBadge(s).tooltip : '');
    const changed = shown(status) !== shown(this.pool);
    this.pool = status;
    if (changed) void this.refresh();
  }

  /** Re-reads the counts; `resize` also measures the folder again (after an import or rebuild). */
  async refresh(resize = false): Promise<void> {
    if (this.failed) return this.render(undefined);
    let services: RemoteServices;
    try {
      services = await this.services;
    } catch {
      return;
    }
    if (resize || Date.now() - this.sizeAt > SIZE_MS) {
      this.sizeAt = Date.now();
      this.size = await storeSizeOnDisk(this.home);
    }
    const [history, memory, pending] = await Promise.all([services.history.counts(), services.memory.status(), services.rules.list('pending')]);
    const pendingRules = pending.length;
    this.render({ sessions: history.sessions, runs: history.runs, events: history.events, facts: memory.facts, current: memory.current_facts, entries: memory.entries, pendingRules });
  }

  dispose(): void {
    clearInterval(this.timer);
    this.configListener.dispose();
    this.item.dispose();
  }

  private render(counts: { sessions: number; runs: number; events: number; facts: number; current: number; entries: number; pendingRules: number } | undefined): void {
    if (vscode.workspace.getConfiguration('recollect.statusBar').get<boolean>('enabled') === false) {
      this.item.hide();
      return;
    }
    if (this.failed) {
      this.item.text = '$(error) Recollect';
      this.item.tooltip = `Recollect could not open its memory store at ${this.home}: ${this.failed}`;
      this.item.command = 'recollect.showLog';
      this.item.show();
      return;
    }
    const size = this.size ? `${this.size.partial ? '≥' : ''}${formatBytes(this.size.bytes)}` : '…';
    if (this.busy) this.item.text = `$(sync~spin) ${this.busy}`;
    else if (counts) this.item.text = `$(database) ${size} · ${counts.sessions} sessions · ${counts.facts} facts${counts.pendingRules ? ` · $(law) ${counts.pendingRules} ${counts.pendingRules === 1 ? 'rule' : 'rules'} to review` : ''}${this.pool ? ` · ${poolBadge(this.pool).text}` : ''}`;
    if (counts) {
      const tip = new vscode.MarkdownString(undefined, true);
      tip.appendMarkdown('**Recollect memory**\n\n');
      tip.appendText(`${this.home}\n\n`);
      tip.appendMarkdown(`- ${size} on disk${this.size ? ` in ${this.size.files.toLocaleString('en')} files` : ''}\n`);
      tip.appendMarkdown(`- ${counts.sessions} sessions imported (${counts.runs} runs, ${counts.events} events)\n`);
      tip.appendMarkdown(`- ${counts.facts} facts (${counts.current} current), ${counts.entries} note entries\n`);
      // Only this one command link is trusted: a person opens the review; the tooltip decides nothing.
      tip.isTrusted = { enabledCommands: ['recollect.reviewRules'] };
      tip.appendMarkdown(`- ${counts.pendingRules} proposed rules waiting for approval ([Review rules](command:recollect.reviewRules))\n`);
      if (this.pool) tip.appendText(`- ${poolBadge(this.pool).tooltip}\n`);
      tip.appendMarkdown('\n');
      tip.appendMarkdown('Click to open the memory browser.');
      this.item.tooltip = tip;
    }
    this.item.command = 'recollect.showMemory';
    this.item.show();
  }
}
