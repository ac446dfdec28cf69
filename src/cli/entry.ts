import { createRequire } from 'node:module';
import * as path from 'node:path';
import { resolveStoreHome } from '../core/store/home';
import type { McpSessionOptions } from '../core/owner/protocol';
import { relayMcp, type Upstream } from './mcpRelay';
import { relayTool } from './toolRelay';
import { relaunchesForMalloc, relaunchWithMalloc } from './mallocRelaunch';

/**
 * The `recollect` command's entry: small on purpose. `recollect mcp` with an owner that runs MCP
 * sessions only relays its stdio there (mcpRelay.ts), and `recollect tool` with an owner running
 * only sends it the call (toolRelay.ts); neither loads the full CLI (cliMain.js: the MCP SDK, the
 * tools, the store), which is what makes a client cost little more than Node. Every other
 * command, and these two when they cannot relay, run the full CLI as before.
 */

declare const __RECOLLECT_VERSION__: string;
const VERSION = typeof __RECOLLECT_VERSION__ === 'string' ? __RECOLLECT_VERSION__ : '0.0.0-dev';

interface FullCli {
  runCli(argv: string[]): void;
  relaySessionHere(claim: string | undefined, session: McpSessionOptions, toClient: (message: Record<string, unknown>) => void): Promise<Upstream>;
}

function full(): FullCli {
  // Loaded at run time from beside this file, so the bundler leaves the full CLI a file of its own.
  return createRequire(__filename)(path.join(__dirname, 'cliMain.js')) as FullCli;
}

/** `--name <value>` as `recollect mcp` reads it; null when the flag is malformed (the full CLI prints the usage). */
function connectionName(args: string[]): string | undefined | null {
  const i = args.indexOf('--name');
  if (i === -1) return undefined;
  const value = args[i + 1];
  return value === undefined || value.startsWith('--') ? null : value;
}

async function start(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const name = command === 'mcp' ? connectionName(rest) : null;
  if (name !== null) {
    const session = { connectionName: name, workspace: process.cwd() };
    const relayed = await relayMcp({
      home: resolveStoreHome(),
      build: VERSION,
      session,
      loadFull: (claim, toClient) => full().relaySessionHere(claim, session, toClient),
      log: (line) => process.stderr.write(`recollect: ${line}\n`),
    });
    if (relayed) return;
  }
  if (command === 'tool' && rest[0]) {
    const code = await relayTool({ home: resolveStoreHome(), build: VERSION, name: rest[0], json: rest[1], out: (t) => process.stdout.write(t) });
    if (code !== undefined) {
      process.exitCode = code;
      return;
    }
  }
  if (relaunchesForMalloc(command)) {
    const code = await relaunchWithMalloc(argv);
    if (code !== undefined) {
      process.exitCode = code;
      return;
    }
  }
  full().runCli(argv);
}

start(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`recollect: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
