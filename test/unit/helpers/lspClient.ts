import { localServices } from '../../../src/core/owner/serviceProxy';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver/node';
import { STATEMENT_MAX } from '../../../src/core/memory/memoryService';
import type { Services } from '../../../src/core/services';
import { answerHostRequest, notesDataHandlers } from '../../../src/host/notesDataHandlers';
import { HOST_METHODS, type ServerInitOptions } from '../../../src/server/protocol';

const SERVER = path.resolve(__dirname, '../../../dist/server.js');

export interface NotesServer {
  connection: ProtocolConnection;
  /** Opens a real file as VS Code would: its text as read from disk. */
  open(file: string, languageId?: string): string;
  change(uri: string, version: number, text: string): void;
  /** The next diagnostics published for `uri` that satisfy `accept`. */
  diagnostics(uri: string, accept?: (d: PublishDiagnosticsParams) => boolean): Promise<PublishDiagnosticsParams>;
  close(): Promise<void>;
  /** What the server wrote to stderr (crashes show up here). */
  stderr(): string;
}

/**
 * Starts the real dist/server.js over stdio. This side stands in for the extension host: it
 * speaks LSP as VS Code's client would and answers the server's recollect/* data requests with
 * the extension's own handlers over a real store.
 */
export async function startNotesServer(services: Services, init?: Partial<ServerInitOptions> | null): Promise<NotesServer> {
  const child = spawn(process.execPath, [SERVER, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const handlers = notesDataHandlers(localServices(services), services.store.home);
  for (const method of HOST_METHODS) connection.onRequest(method, (params: unknown) => answerHostRequest(handlers, method, params));

  const published: PublishDiagnosticsParams[] = [];
  const waiters: { uri: string; accept: (d: PublishDiagnosticsParams) => boolean; resolve: (d: PublishDiagnosticsParams) => void }[] = [];
  connection.onNotification('textDocument/publishDiagnostics', (d: PublishDiagnosticsParams) => {
    published.push(d);
    for (const w of [...waiters]) {
      if (w.uri === d.uri && w.accept(d)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(d);
      }
    }
  });
  connection.listen();

  const initializationOptions = init === null ? undefined : { statementMax: STATEMENT_MAX, storeHome: services.store.home, ...init };
  try {
    await connection.sendRequest('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: { textDocument: { completion: { completionItem: { snippetSupport: false } }, hover: { contentFormat: ['markdown'] } } },
      initializationOptions,
    });
  } catch (err) {
    connection.dispose();
    child.kill();
    throw err;
  }
  await connection.sendNotification('initialized', {});

  return {
    connection,
    open(file, languageId = 'markdown') {
      const uri = pathToFileURL(file).href;
      void connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text: fs.readFileSync(file, 'utf8') } });
      return uri;
    },
    change(uri, version, text) {
      void connection.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges: [{ text }] });
    },
    diagnostics(uri, accept = () => true) {
      return new Promise((resolve) => waiters.push({ uri, accept, resolve }));
    },
    async close() {
      await connection.sendRequest('shutdown').catch(() => undefined);
      await connection.sendNotification('exit').catch(() => undefined);
      connection.dispose();
      if (child.exitCode === null) child.kill();
    },
    stderr: () => stderr,
  };
}
