import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isRefusal } from '../core/refusal';
import type { StoreAccess } from '../core/owner/storeAccess';
import { applyImport, exportAll, previewImport, readMarkdownSources, toolCaller, undoImport, type ImportPreview } from './transferFlow';

interface TransferDeps {
  /** The store's tools, run by whichever process owns it. */
  store: StoreAccess;
  log: vscode.LogOutputChannel;
}

const CLIENT = 'vscode-extension';
/** How many paths a modal lists before it says "and N more": a modal is not a report. */
const LISTED = 8;

const workspace = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;

/**
 * "Recollect: Export Memory…": export_memory paged through every section into one Markdown file
 * the person picks. Hidden argument, for the end-to-end tests only: `{ target: "<absolute path>" }`
 * writes there without the save dialog.
 */
export async function exportMemoryCommand(deps: TransferDeps, arg?: unknown): Promise<object | undefined> {
  const hidden = typeof arg === 'object' && arg !== null && typeof (arg as { target?: unknown }).target === 'string' ? (arg as { target: string }).target : undefined;
  let target = hidden && path.isAbsolute(hidden) ? hidden : undefined;
  if (!target) {
    const picked = await vscode.window.showSaveDialog({
      title: 'Export Recollect memory as Markdown',
      saveLabel: 'Export',
      filters: { Markdown: ['md'] },
      defaultUri: vscode.Uri.file(path.join(workspace() ?? os.homedir(), `recollect-memory-${new Date().toISOString().slice(0, 10)}.md`)),
    });
    if (!picked) return undefined;
    target = picked.fsPath;
  }
  const file = target;
  const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Recollect: exporting memory…' }, (progress) =>
    exportAll(toolCaller(deps.store, CLIENT, workspace()), ({ pages, section }) => progress.report({ message: `page ${pages} (${section})` })),
  );
  if (isRefusal(result)) {
    void vscode.window.showErrorMessage(`Recollect could not export: ${result.reason}`);
    return result;
  }
  // Written whole to a temp file and renamed, so a failed export never leaves half a document behind.
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, result.document);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true }); // a full disk leaves no half document beside the person's file
    throw err;
  }
  const bytes = Buffer.byteLength(result.document, 'utf8');
  deps.log.info(`exported memory to ${file}: ${bytes} bytes in ${result.pages} pages`);
  if (!hidden) {
    void vscode.window.showInformationMessage(`Recollect exported its memory to ${file} (${result.pages} ${result.pages === 1 ? 'page' : 'pages'}).`, 'Open').then(async (pick) => {
      if (pick) await vscode.window.showTextDocument(vscode.Uri.file(file));
    });
  }
  return { ok: true, file, bytes, pages: result.pages, counts: result.counts };
}

/**
 * "Recollect: Import Memory…": Markdown files or a folder → preview_import, the preview (with
 * conflicts) in a modal, apply_import when the person confirms, and Undo (undo_import) offered
 * in the notification that says what was imported.
 */
export async function importMemoryCommand(deps: TransferDeps): Promise<object | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title: 'Import Markdown notes into Recollect memory',
    openLabel: 'Preview Import',
    canSelectFiles: true,
    canSelectFolders: true,
    canSelectMany: true,
    filters: { Markdown: ['md'] },
  });
  if (!picked?.length) return undefined;
  const source = readMarkdownSources(picked.map((u) => u.fsPath));
  if (isRefusal(source)) {
    void vscode.window.showErrorMessage(`Recollect: ${source.reason}`);
    return source;
  }
  const call = toolCaller(deps.store, CLIENT, workspace());
  const preview = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Recollect: checking the notes to import…' }, () => previewImport(call, source));
  if (isRefusal(preview)) {
    void vscode.window.showErrorMessage(`Recollect will not import these files: ${preview.reason}`);
    return preview;
  }
  if (!preview.wouldCreate.length) {
    void vscode.window.showInformationMessage(`Recollect: nothing new to import into ${preview.folder} — ${preview.unchanged.length} already there unchanged, ${preview.conflicts.length} in conflict.`);
    return preview;
  }
  const pick = await vscode.window.showWarningMessage(`Import ${preview.wouldCreate.length} new ${preview.wouldCreate.length === 1 ? 'note' : 'notes'} into ${preview.folder}?`, { modal: true, detail: previewDetail(preview) }, 'Import');
  if (pick !== 'Import') return { ...preview, applied: false };
  const applied = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Recollect: importing notes…' }, () => applyImport(call, preview.batchIds));
  if (isRefusal(applied)) {
    void vscode.window.showErrorMessage(`Recollect could not import: ${applied.reason}`);
    return applied;
  }
  deps.log.info(`imported ${applied.created} notes into ${preview.folder} (batches ${preview.batchIds.join(', ')})`);
  const kept = applied.conflicts.length ? ` ${applied.conflicts.length} kept as they were (a different file was there).` : '';
  void vscode.window.showInformationMessage(`Recollect imported ${applied.created} ${applied.created === 1 ? 'note' : 'notes'} into ${preview.folder}.${kept}`, 'Undo').then(async (choice) => {
    if (choice !== 'Undo') return;
    const undone = await undoImport(call, preview.batchIds);
    if (isRefusal(undone)) void vscode.window.showErrorMessage(`Recollect could not undo the import: ${undone.reason}`);
    else void vscode.window.showInformationMessage(`Recollect undid the import: ${undone.retired} ${undone.retired === 1 ? 'note' : 'notes'} retired (Restore in the memory browser brings one back).`);
  });
  return { ...preview, applied: true, created: applied.created };
}

function previewDetail(p: ImportPreview): string {
  const list = (paths: string[]) => paths.slice(0, LISTED).map((x) => `  ${x}`).join('\n') + (paths.length > LISTED ? `\n  …and ${paths.length - LISTED} more` : '');
  const lines = [`${p.files} Markdown ${p.files === 1 ? 'file' : 'files'} checked. New notes:`, list(p.wouldCreate)];
  if (p.conflicts.length) lines.push(`Conflicts — a different file is already there and will be kept, not overwritten:`, list(p.conflicts));
  if (p.unchanged.length) lines.push(`${p.unchanged.length} already imported unchanged.`);
  if (p.datesClamped) lines.push(`${p.datesClamped} front-matter dates in the future will be set to the import time.`);
  lines.push('Undo is offered once the import is done.');
  return lines.join('\n');
}
