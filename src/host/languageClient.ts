import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { STATEMENT_MAX } from '../core/memory/memoryService';
import { vaultRoot } from '../core/memory/vault/vaultLayout';
import type { RemoteServices } from '../core/owner/serviceProxy';
import { HOST_METHODS, STORE_CHANGED, type HostHandlers, type ServerInitOptions } from '../server/protocol';
import { answerHostRequest, notesDataHandlers } from './notesDataHandlers';

/** Another process may write to the store; a look is one fstat plus two counts. */
const STORE_POLL_MS = 4_000;

/**
 * Starts the notes language server (dist/server.js, its own process) the first time a vault
 * note or a `.recollect` rule file is open, and answers its data requests from this window's
 * store — the server never opens a second copy.
 */
export class NotesLanguageClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private poll: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** What VS Code matches documents with: vault Markdown and rule files anywhere. */
  readonly selector: vscode.DocumentFilter[];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly services: Promise<RemoteServices>,
    private readonly home: string,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.selector = [
      { scheme: 'file', pattern: new vscode.RelativePattern(vscode.Uri.file(vaultRoot(home)), '**/*.md') },
      { scheme: 'file', pattern: '**/.recollect/**/*.md' },
    ];
    const maybeStart = (doc: vscode.TextDocument) => {
      if (this.enabled() && vscode.languages.match(this.selector, doc) > 0) void this.start();
    };
    this.disposables.push(
      vscode.workspace.onDidOpenTextDocument(maybeStart),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('recollect.languageServer')) return;
        if (!this.enabled()) void this.stop();
        else vscode.workspace.textDocuments.forEach(maybeStart);
      }),
    );
    vscode.workspace.textDocuments.forEach(maybeStart);
  }

  get state(): 'stopped' | 'starting' | 'running' {
    if (this.client?.isRunning()) return 'running';
    return this.starting ? 'starting' : 'stopped';
  }

  /** Starts the server if it is not running; resolves once it has answered `initialize`. */
  start(): Promise<void> {
    this.starting ??= this.launch().catch((err: unknown) => {
      this.starting = undefined;
      const message = err instanceof Error ? err.message : String(err);
      this.log.error(`notes language server did not start: ${message}`);
      throw err;
    });
    return this.starting;
  }

  async dispose(): Promise<void> {
    for (const d of this.disposables) d.dispose();
    await this.stop();
  }

  private enabled(): boolean {
    return vscode.workspace.getConfiguration('recollect.languageServer').get<boolean>('enabled') !== false;
  }

  private async launch(): Promise<void> {
    const module = this.context.asAbsolutePath('dist/server.js');
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.ipc },
      debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
    };
    const initializationOptions: ServerInitOptions = { statementMax: STATEMENT_MAX, storeHome: this.home };
    const clientOptions: LanguageClientOptions = {
      // languageclient hands each pattern to vscode.languages untouched, so VS Code's own
      // RelativePattern works here — and spares escaping a store path that holds glob characters.
      documentSelector: this.selector as LanguageClientOptions['documentSelector'],
      initializationOptions,
      outputChannel: this.log,
      synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(vaultRoot(this.home)), '**/*.md')) },
      markdown: { isTrusted: false, supportHtml: false },
    };
    const client = new LanguageClient('recollect', 'Recollect Notes', serverOptions, clientOptions);
    const services = this.services;
    const handlers: Promise<HostHandlers> = services.then((s) => notesDataHandlers(s, this.home));
    handlers.catch(() => undefined);
    for (const method of HOST_METHODS) {
      client.onRequest(method, async (params: unknown) => answerHostRequest(await handlers, method, params));
    }
    this.client = client;
    await client.start();
    this.log.info(`notes language server running (${module})`);
    this.watchStore(client, services);
  }

  /** Tells the server when memory changed, so ids that now exist (or no longer do) are checked again. */
  private watchStore(client: LanguageClient, services: Promise<RemoteServices>): void {
    let seen: string | undefined;
    const look = async () => {
      const version = await (await services).browse.version();
      if (seen !== undefined && version !== seen && client.isRunning()) await client.sendNotification(STORE_CHANGED);
      seen = version;
    };
    this.poll = setInterval(() => void look().catch(() => undefined), STORE_POLL_MS);
  }

  private async stop(): Promise<void> {
    clearInterval(this.poll);
    const client = this.client;
    this.client = undefined;
    this.starting = undefined;
    if (client?.isRunning()) await client.stop();
  }
}
