import * as path from 'node:path';
import { isRefusal } from '../core/refusal';
import { openServices, type Services } from '../core/services';
import { resolveStoreHome } from '../core/store/home';
import { invokeTool } from '../core/tools/invoke';
import { languageModelToolsManifest } from '../core/tools/jsonSchema';
import { findTool, TOOLS } from '../core/tools/registry';
import { serveMcpStdio } from './mcpServer';

declare const __RECOLLECT_VERSION__: string;
const VERSION = typeof __RECOLLECT_VERSION__ === 'string' ? __RECOLLECT_VERSION__ : '0.0.0-dev';

/** Exit codes a script can act on: the tool answered, the tool refused, or something broke. */
const EXIT = { answered: 0, usage: 2, refused: 3, failed: 1 } as const;

const USAGE = `recollect — durable local memory for coding agents

  recollect tool <name> '<json input>'   call one tool, print its JSON result
  recollect import <file-or-folder>...   import chat transcripts (VS Code, Copilot, Claude Code, Codex)
  recollect tools                        list the tools
  recollect mcp                          serve the tools over MCP (stdio)
  recollect manifest                     print contributes.languageModelTools

Store: RECOLLECT_HOME, else ~/.recollect`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'tool':
      return withServices((s) => runTool(s, rest[0], rest[1]));
    case 'import':
      if (!rest.length) {
        process.stderr.write('usage: recollect import <file-or-folder>...\n');
        return EXIT.usage;
      }
      return withServices(async (s) => {
        const report = await s.importer.importPaths(rest);
        process.stdout.write(JSON.stringify(report, null, 2) + '\n');
        return EXIT.answered;
      });
    case 'tools':
      for (const t of TOOLS) process.stdout.write(`${t.name}\t${t.family}\t${t.displayName}\n`);
      return EXIT.answered;
    case 'manifest':
      process.stdout.write(JSON.stringify(languageModelToolsManifest(TOOLS), null, 2) + '\n');
      return EXIT.answered;
    case 'mcp':
      return withServices(async (s) => {
        await serveMcpStdio(s, VERSION);
        return EXIT.answered;
      });
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE + '\n');
      return command ? EXIT.answered : EXIT.usage;
    default:
      process.stderr.write(`unknown command "${command}"\n\n${USAGE}\n`);
      return EXIT.usage;
  }
}

async function runTool(services: Services, name: string | undefined, json: string | undefined): Promise<number> {
  const tool = name ? findTool(name) : undefined;
  if (!tool) {
    process.stderr.write(`unknown tool "${name ?? ''}"; known: ${TOOLS.map((t) => t.name).join(', ')}\n`);
    return EXIT.usage;
  }
  let input: unknown = {};
  if (json !== undefined) {
    try {
      input = JSON.parse(json);
    } catch (err) {
      process.stdout.write(JSON.stringify({ ok: false, reason: `input is not JSON: ${(err as Error).message}` }) + '\n');
      return EXIT.refused;
    }
  }
  const result = await invokeTool(tool, input, services, { client: 'cli', workspace: process.cwd() });
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  return isRefusal(result) ? EXIT.refused : EXIT.answered;
}

async function withServices(fn: (s: Services) => Promise<number>): Promise<number> {
  const services = await openServices({ home: resolveStoreHome(), wasmPath: path.join(__dirname, 'sql-wasm.wasm') });
  try {
    return await fn(services);
  } finally {
    services.store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`recollect: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = EXIT.failed;
  },
);
