import * as vscode from 'vscode';
import type { IndexProgress } from '../core/memory/semantic/semanticService';
import type { Services } from '../core/services';

/**
 * Shows the background indexing by meaning in the status bar's progress area while a pass
 * runs: how many memories and chat messages have a vector, of how many. It never asks for
 * attention (an import of a large history may take the model minutes).
 */
export function showSemanticProgress(services: Services, log: vscode.LogOutputChannel): vscode.Disposable {
  let active: { report: (p: IndexProgress) => void; done: () => void } | undefined;
  let lastError: string | undefined;
  const unsubscribe = services.semantic.onProgress((p) => {
    if (p.error && p.error !== lastError) log.warn(`semantic indexing: ${p.error}`);
    lastError = p.error;
    if (p.indexing && !active) {
      void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Recollect: indexing by meaning' }, (progress) =>
        new Promise<void>((resolve) => {
          active = { report: (q) => progress.report({ message: `${q.indexed.toLocaleString()} of ${q.total.toLocaleString()}` }), done: resolve };
          active.report(p);
        }),
      );
    } else if (active && p.indexing) active.report(p);
    else if (active && !p.indexing) {
      active.done();
      active = undefined;
      log.info(`semantic index (${p.model}): ${p.indexed} of ${p.total} (memory ${p.memory.indexed}/${p.memory.total}, history ${p.history.indexed}/${p.history.total})`);
    }
  });
  return { dispose: () => (unsubscribe(), active?.done()) };
}
