import type * as vscode from 'vscode';

export async function activate(context: vscode.ExtensionContext) {
  const { startRecollect } = await import('./host/container');
  return startRecollect(context);
}

export async function deactivate(): Promise<void> {
  // Disposables registered on the context close the store; VS Code awaits this until it has.
  const { storeClosed } = await import('./host/container');
  await storeClosed();
}
