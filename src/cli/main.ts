import { replayProgressLines } from '../core/store/replayProgress';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ActivityLog } from '../core/activity/activityLog';
import { activityText } from '../core/activity/activityText';
import { isRefusal } from '../core/refusal';
import { openServices, type Services } from '../core/services';
import { resolveStoreHome } from '../core/store/home';
import { setWasmCompilation } from '../core/store/sqlite';
import { refusalOf } from '../core/tools/invoke';
import { WriteRefusedError } from '../core/store/errors';
import { languageModelToolsManifest } from '../core/tools/jsonSchema';
import { findTool, TOOLS } from '../core/tools/registry';
import { DEFAULT_PORT, startHttpServer } from './httpServer';
import { ensureToken } from './httpToken';
import { serveMcpStdio } from './mcpServer';
import { warmTokenizer } from '../core/text/tokens';
import { EVAL_USAGE, evalCommand } from './eval/evalCommand';
import { ExcludeGlobs } from '../core/history/excludeGlobs';
import { FORGET_USAGE, parseForgetArgs, runForget } from './forgetCommand';
import { asRefusal, StoreLink } from '../core/owner/storeLink';
import { refuse } from '../core/refusal';
import { serviceProxy } from '../core/owner/serviceProxy';
import type { McpSessionOptions, ProcessKind } from '../core/owner/protocol';
import { localMcpSession, mcpSessionHook } from './mcpSession';
import { POOL_USAGE, poolCommand } from './poolCommand';

declare const __RECOLLECT_VERSION__: string;
const VERSION = typeof __RECOLLECT_VERSION__ === 'string' ? __RECOLLECT_VERSION__ : '0.0.0-dev';

/** Exit codes a script can act on: the tool answered, the tool refused, or something broke. */
const EXIT = { answered: 0, usage: 2, refused: 3, failed: 1 } as const;

const USAGE = `recollect — durable local memory for coding agents

  recollect tool <name> '<json input>'   call one tool, print its JSON result
  recollect import <file-or-folder>... [--exclude <glob>]...
                                         import chat transcripts (VS Code, Copilot, Claude Code, Codex);
                                         --exclude leaves matching files and folders out (as recollect.history.exclude)
  recollect tools                        list the tools
  recollect activity [--limit N] [--json]  Recollect's own recent tool calls, newest first (default 50)
  recollect mcp [--name <name>]          serve the tools over MCP (stdio); --name names this connection
  recollect serve [--port N]             serve MCP over Streamable HTTP on 127.0.0.1 (default port ${DEFAULT_PORT}),
                                         bearer token in <store>/mcp-http-token; a client's URL
                                         /mcp?name=<name> (or header X-Recollect-Connection) names its connection
  recollect manifest                     print contributes.languageModelTools
  recollect restore <export.md>          read an export_memory document (pages concatenated) into an empty store
  recollect forget --session <id> | --workspace <folder> | --before <date>
                                         forget imported history everywhere, on disk too (--help: more)
  recollect eval <file>...               recall@5/@10 of every recall surface and a BM25 yardstick on
                                         LongMemEval or LoCoMo files (each conversation in a fresh temp store)
  ${POOL_USAGE}

Store: RECOLLECT_HOME, else ~/.recollect`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'tool':
      setWasmCompilation('one-shot');
      return withLink('cli', (link) => runTool(link, rest[0], rest[1]));
    case 'import': {
      const { paths, globs } = splitExcludes(rest);
      if (!paths.length || globs.includes('')) {
        process.stderr.write('usage: recollect import <file-or-folder>... [--exclude <glob>]...\n');
        return EXIT.usage;
      }
      return withLink('cli', async (link) => {
        const own = link.ownServices();
        if (!own) {
          // The store's owner imports (it holds the database); a long-lived owner seals later itself.
          const report = await link.call({ op: 'import', paths: paths.map((p) => path.resolve(p)), globs });
          process.stdout.write(JSON.stringify(report, null, 2) + '\n');
          return EXIT.answered;
        }
        const s = await own;
        const report = await s.importer.importPaths(paths, undefined, new ExcludeGlobs(globs));
        // The summary DAG catches up with what was imported (and anything an earlier run left unbuilt).
        const summaries = await s.lcm.buildAll();
        // A one-off process: nothing long-lived may open this store soon to seal the journal
        // the import grew, so it checkpoints and seals before it exits.
        s.store.checkpoint();
        await s.store.sealJournal();
        process.stdout.write(JSON.stringify({ ...report, summaries }, null, 2) + '\n');
        return EXIT.answered;
      });
    }
    case 'restore': {
      const file = rest[0];
      if (!file) return usage('recollect restore <export.md>');
      const document = fs.readFileSync(file, 'utf8');
      return withLink('cli', async (link) => {
        const report = await serviceProxy(link, 'transfer').restore(document);
        process.stdout.write(JSON.stringify(report, null, 2) + '\n');
        return isRefusal(report) ? EXIT.refused : EXIT.answered;
      });
    }
    case 'forget': {
      // A person's act, so a command of its own and never a tool a model could call.
      if (rest[0] === '--help') {
        process.stdout.write(FORGET_USAGE + '\n');
        return EXIT.answered;
      }
      const request = parseForgetArgs(rest);
      if (request.kind === 'usage') {
        process.stderr.write(`recollect forget: ${request.reason}\n`);
        return usage(FORGET_USAGE);
      }
      return withLink('cli', async (link) => ((await runForget({ forget: serviceProxy(link, 'forget') }, request, (t) => process.stdout.write(t))) ? EXIT.answered : EXIT.refused));
    }
    case 'pool':
      // The pool applies pulled batches to the database, so it runs where the database is: in
      // the store's owner. Another owner running (VS Code, an MCP server) syncs itself.
      return poolCommand(rest, resolveStoreHome(), (fn) => withLink('cli', async (link) => {
        const own = link.ownServices();
        if (!own) {
          process.stdout.write(JSON.stringify(refuse(`another process owns this store (${link.storeRole().owner?.kind ?? 'an owner'}); the team pool syncs in the owner: VS Code does, or stop it and run this again`), null, 2) + '\n');
          return EXIT.refused;
        }
        return fn(await own);
      }), (t) => process.stdout.write(t));
    case 'eval':
      if (!rest.length) return usage(EVAL_USAGE);
      return evalCommand(rest, path.join(__dirname, 'sql-wasm.wasm'));
    case 'activity':
      return showActivity(rest);
    case 'tools':
      for (const t of TOOLS) process.stdout.write(`${t.name}\t${t.family}\t${t.displayName}\n`);
      return EXIT.answered;
    case 'manifest':
      process.stdout.write(JSON.stringify(languageModelToolsManifest(TOOLS), null, 2) + '\n');
      return EXIT.answered;
    case 'mcp': {
      const name = option(rest, '--name');
      if (name === null) return usage('recollect mcp [--name <name>]');
      setWasmCompilation('server');
      // Served while the store opens (or its owner is found): a client's handshake never waits
      // for a large store; a failed open is reported to each tool call, not as a crash.
      const link = linkStore('mcp', true);
      // A process that takes over warms the tokenizer later: its first job is to answer the calls waiting for it.
      link.onRole((role, takeover) => role === 'owner' && warmTokenizer(takeover ? 10_000 : 0));
      try {
        await serveMcpStdio(link, VERSION, { connectionName: name });
        return EXIT.answered;
      } finally {
        await link.close();
      }
    }
    case 'serve': {
      const portText = option(rest, '--port');
      const port = portText === undefined ? DEFAULT_PORT : Number(portText);
      if (portText === null || !Number.isInteger(port) || port < 0 || port > 65535) return usage('recollect serve [--port <0-65535>]');
      setWasmCompilation('server');
      return withLink('serve', (link) => serveHttp(link, port), true);
    }
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

async function runTool(link: StoreLink, name: string | undefined, json: string | undefined): Promise<number> {
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
  await link.connectionSeen('cli').catch(() => undefined);
  const result = await link.callTool(tool.name, input, { client: 'cli', workspace: process.cwd() });
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  return isRefusal(result) ? EXIT.refused : EXIT.answered;
}

/** Reads the activity log beside the store without opening the store: it is not part of it. */
function showActivity(args: string[]): number {
  const limitText = option(args, '--limit');
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (limitText === null || !Number.isInteger(limit) || limit < 1) return usage('recollect activity [--limit <1 or more>] [--json]');
  const home = resolveStoreHome();
  const page = new ActivityLog(home).recent(limit);
  process.stdout.write(args.includes('--json') ? JSON.stringify(page, null, 2) + '\n' : activityText(page, home));
  return EXIT.answered;
}

/** Runs until SIGINT/SIGTERM. Prints where the token is, never the token itself. */
async function serveHttp(link: StoreLink, port: number): Promise<number> {
  const { token, file } = ensureToken(resolveStoreHome());
  const running = await startHttpServer({ services: link, version: VERSION, port, token, workspace: process.cwd() });
  process.stdout.write(`recollect: MCP (Streamable HTTP) listening on ${running.url} (bound to ${running.address.address}:${running.address.port})\n`);
  process.stdout.write(`recollect: bearer token in ${file}; send it as "Authorization: Bearer <token>"\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await running.close();
  return EXIT.answered;
}

/** `--flag value`: the value, undefined when the flag is absent, null when its value is missing. */
function option(args: string[], flag: string): string | undefined | null {
  const i = args.indexOf(flag);
  if (i === -1) return undefined;
  const value = args[i + 1];
  return value === undefined || value.startsWith('--') ? null : value;
}

/** `--exclude <glob>` pairs out of an argument list; a flag without its glob gives an empty one (a usage error). */
function splitExcludes(args: string[]): { paths: string[]; globs: string[] } {
  const paths: string[] = [];
  const globs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--exclude') globs.push(args[++i] ?? '');
    else paths.push(args[i] as string);
  }
  return { paths, globs };
}

function usage(line: string): number {
  process.stderr.write(`usage: ${line}\n`);
  return EXIT.usage;
}

/** `background`: a long-lived server indexes new memories and messages by meaning as they arrive. */
function openCliServices(background = false): Promise<Services> {
  return openServices({ home: resolveStoreHome(), wasmPath: path.join(__dirname, 'sql-wasm.wasm'), onReplayProgress: replayProgressLines((line) => process.stderr.write(`recollect: ${line}\n`)) }, { semanticBackground: background });
}

/**
 * This process's place on the store home (core/owner): a client of the running owner, else the
 * owner itself, which opens the store. A one-shot command with no owner running owns the store
 * for its lifetime rather than open it beside the election, so no two processes ever hold it.
 */
function linkStore(kind: ProcessKind, background: boolean, claim?: string): StoreLink {
  return StoreLink.start({ home: resolveStoreHome(), kind, build: VERSION, open: () => openCliServices(background), log: (line) => process.stderr.write(`recollect: ${line}\n`), mcpSession: mcpSessionHook(VERSION), claim });
}

/** A write the store refused (a full disk, a read-only folder) is printed as the refusal it is, exit 3. */
async function withLink(kind: ProcessKind, fn: (link: StoreLink) => Promise<number>, background = false): Promise<number> {
  const link = linkStore(kind, background);
  try {
    if ((await link.ready()) === 'refused') {
      process.stdout.write(JSON.stringify(refuse(link.refusedBecause() ?? 'the store owner refused this process'), null, 2) + '\n');
      return EXIT.refused;
    }
    return await fn(link);
  } catch (err) {
    const refusal = err instanceof WriteRefusedError ? refusalOf(err) : asRefusal(err);
    if (!refusal) throw err;
    process.stdout.write(JSON.stringify(refusal, null, 2) + '\n');
    return EXIT.refused;
  } finally {
    await link.close();
  }
}

/** The whole CLI, loaded by the small entry (entry.ts) for every command but a relayed `recollect mcp`. */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`recollect: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}

/**
 * A relay's session once it runs here (mcpRelay.ts): it won the election (`claim`), or its owner
 * runs no MCP sessions. The store link and MCP server are those of `recollect mcp`.
 */
export async function relaySessionHere(claim: string | undefined, session: McpSessionOptions, toClient: (message: Record<string, unknown>) => void): Promise<{ send(message: Record<string, unknown>): void; close(): Promise<void> }> {
  setWasmCompilation('server');
  const link = linkStore('mcp', true, claim);
  // It takes over by definition: its first job is to answer the calls waiting for it.
  link.onRole((role) => role === 'owner' && warmTokenizer(10_000));
  const local = localMcpSession(link, VERSION, session, toClient);
  return {
    send: local.send,
    close: async () => {
      await local.close();
      await link.close();
    },
  };
}
