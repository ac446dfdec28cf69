/**
 * A second VS Code window's extension host, without VS Code: a separate process that joins the
 * store as the extension does (src/host/storeOwnership.ts, kind "vscode") and answers the host's
 * own view handlers (memory browser, session history, rule approval, the notes language server)
 * and its language-model tools over that link (`tool` as an MCP server calls one, `toolHere` as the
 * window's language-model tools do, opening a next session with an opener that records it). Driven by JSON lines on stdin:
 * `{id, view, method, params}` → `{id, result}` or `{id, error}`. Bundled by the test that runs it:
 * `node windowChild.cjs <home> <sql-wasm.wasm>`.
 */
import * as readline from 'node:readline';
import { openServices } from '../../../src/core/services';
import { historyViewHandlers } from '../../../src/host/historyViewHandlers';
import { memoryViewHandlers } from '../../../src/host/memoryViewHandlers';
import { notesDataHandlers } from '../../../src/host/notesDataHandlers';
import { rulesViewHandlers } from '../../../src/host/rulesViewHandlers';
import { joinStoreAsHost } from '../../../src/host/storeOwnership';
import { callToolHere } from '../../../src/host/toolCall';
import type { NextSession } from '../../../src/core/chapters/chaptersService';

type Handlers = Record<string, (params: unknown) => unknown>;

async function main(): Promise<void> {
  const [home, wasmPath] = process.argv.slice(2);
  if (!home || !wasmPath) throw new Error('usage: windowChild <home> <sql-wasm.wasm>');
  const lines: string[] = [];
  const log = { info: (line: string) => lines.push(line) } as unknown as Parameters<typeof joinStoreAsHost>[0]['log'];
  const store = joinStoreAsHost({ home, build: 'test', log, open: () => openServices({ home, wasmPath }, { embeddings: { missing: 'off in this test' } }) });
  const services = await store.services;
  // This window's opener, as offeringOpener is in VS Code: it records what it was asked to open.
  const opened: NextSession[] = [];
  const opener = { open: (next: NextSession) => (opened.push(next), Promise.resolve({ opened: false, how: `offered in window ${process.pid}` })) };
  const views: Record<string, Handlers> = {
    memory: memoryViewHandlers(services, {
      confirm: () => Promise.resolve(true),
      openFile: () => Promise.resolve(),
      openSession: () => Promise.resolve(),
      openRules: () => Promise.resolve(),
      vaultRoot: `${home}/vault`,
    }) as unknown as Handlers,
    history: historyViewHandlers(services, { runDoor: () => Promise.resolve(undefined), openExternal: () => Promise.resolve(false), takeOpening: () => ({}) }) as unknown as Handlers,
    rules: rulesViewHandlers(services, { machineId: 'machine-of-the-test', approver: 'Ana', confirmApproval: () => Promise.resolve(true) }) as unknown as Handlers,
    notes: notesDataHandlers(services, home) as unknown as Handlers,
    window: {
      role: () => store.link.storeRole(),
      tool: (p) => {
        const { name, input } = p as { name: string; input: unknown };
        return store.link.callTool(name, input, { client: 'copilot' });
      },
      // As the language-model tools call a tool (languageModelTools.ts): a next session opens in this window.
      toolHere: (p) => {
        const { name, input } = p as { name: string; input: unknown };
        return callToolHere(store.link, opener, name, input, { client: 'copilot' });
      },
      opened: () => opened,
      log: () => lines,
    },
  };
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (text) => {
    const { id, view, method, params } = JSON.parse(text) as { id: number; view: string; method: string; params: unknown };
    void (async () => {
      try {
        const handler = views[view]?.[method];
        if (!handler) throw new Error(`no ${view}.${method}`);
        process.stdout.write(JSON.stringify({ id, result: (await handler(params)) ?? null }) + '\n');
      } catch (err) {
        process.stdout.write(JSON.stringify({ id, error: err instanceof Error ? err.message : String(err) }) + '\n');
      }
    })();
  });
  rl.on('close', () => void store.close().then(() => process.exit(0)));
  process.stdout.write(JSON.stringify({ ready: true }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack));
  process.exit(1);
});
