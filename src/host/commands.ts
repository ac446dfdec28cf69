import * as vscode from 'vscode';
import type { ImportReport } from '../core/history/importer';
import type { Services } from '../core/services';

interface CommandDeps {
  services: Promise<Services>;
  log: vscode.LogOutputChannel;
  home: string;
  importNow(): Promise<ImportReport>;
}

/** The command palette, as a table: id → what it does. package.json names the same ids. */
export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const table: Record<string, () => unknown> = {
    'recollect.showLog': () => deps.log.show(),
    'recollect.openStoreFolder': () => vscode.env.openExternal(vscode.Uri.file(deps.home)),
    'recollect.importNow': async () => {
      const r = await deps.importNow();
      const problems = r.problems.length ? ` ${r.problems.length} problems (see the log).` : '';
      void vscode.window.showInformationMessage(`Recollect: ${r.events} new events in ${r.sessions} sessions from ${r.files} files.${problems}`);
      return r;
    },
    'recollect.showStatus': async () => {
      const status = (await deps.services).memory.status();
      const text = `Recollect: ${status.facts} facts (${status.current_facts} current), ${status.entries} note entries, ${status.entities} entities — store ${deps.home}`;
      await vscode.window.showInformationMessage(text);
    },
  };
  return Object.entries(table).map(([id, run]) => vscode.commands.registerCommand(id, run));
}
