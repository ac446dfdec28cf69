import type * as vscode from 'vscode';

export async function activate(context: vscode.ExtensionContext) {
  const { startRecollect } = await import('./host/container');
  return startRecollect(context);
}

export function deactivate(): void {
  // Disposables registered on the context close the store; nothing else to do.
}
