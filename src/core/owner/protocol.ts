import type * as net from 'node:net';

/**
 * The version of what owner and clients say to each other over the socket. Bumped on any
 * change to the messages below; an owner and a client of different versions never serve each
 * other (the client refuses every call with the reason, and touches nothing).
 */
export const OWNER_PROTOCOL = 2;

/** Which kind of Recollect process this is: said in the hello, shown by memory_status. */
export type ProcessKind = 'vscode' | 'mcp' | 'serve' | 'cli';

export interface Peer {
  protocol: number;
  /** The build's version (package.json), for a person reading a refusal. */
  build: string;
  pid: number;
  kind: ProcessKind;
}

/**
 * The first line each side sends. The owner answers a hello with a welcome or a refusal. A hello
 * with `mcp` is a relay (`recollect mcp` as a thin process): the owner that welcomes it with
 * `mcp` runs an MCP session for it, and every later line either way is a JSON-RPC message of that
 * session (plus the owner's goodbye); a welcome without `mcp` is an owner that runs no MCP
 * sessions, and the relay hangs up and serves MCP itself. `readOnlyTools`: the tools that only
 * read, which a thin process (it has no registry) asks again of the next owner when this one dies.
 */
export type Greeting =
  | { hello: Peer; mcp?: McpSessionOptions }
  | { welcome: Peer & { home: string }; readOnlyTools: string[]; mcp?: true }
  | { refused: { reason: string; owner: Peer } };

/** What the owner needs to run a relay's MCP session as the relay's own process would. */
export interface McpSessionOptions {
  /** `--name`: the connection's name, whatever the client calls itself. */
  connectionName?: string | undefined;
  /** The relay's working folder, which "this session" is looked for in. */
  workspace: string;
}

/**
 * The JSON-RPC error code of a relayed request the owner did not run because it is handing the
 * store over or leaving (`data: {notRun: true}`): the relay asks the next owner, write or not.
 * In the range JSON-RPC leaves to servers.
 */
export const MCP_NOT_RUN = -32099;

/** One relay's MCP messages as the owner sees them: sent as lines, each received line handed to `onmessage`. */
export interface McpChannel {
  send(message: unknown): void;
  close(): void;
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
}

/** What a client asks of the owner. Every call names whether it changes the store (see retry in ownerClient). */
export type Call =
  /** `callerOpens`: the caller (a VS Code window) opens a next session itself (ToolContext.callerOpens). */
  | { op: 'tool'; name: string; input: unknown; client: string; workspace?: string | undefined; callerOpens?: true }
  | { op: 'resources.list'; offset: number; limit: number }
  | { op: 'resources.read'; uri: string }
  | { op: 'connection.seen'; name: string }
  | { op: 'import'; paths: string[]; globs: string[] }
  | { op: 'service'; method: string; args: unknown[] }
  /** A VS Code window asks a non-VS Code owner for the store: `claim` is the owner.lock text the window will hold. */
  | { op: 'handover'; claim: string };

export type Request = { id: number; call: Call };
/** `refused`: a write the store refused (full disk, read-only), carried as such so each surface can answer it as a refusal. */
/** `notRun`: the owner is handing the store over and did not run the call; the client asks the next owner. */
export type Reply = { id: number; result: unknown } | { id: number; error: string; refused?: { reason: string; budget?: unknown }; notRun?: true };

/** A line over this is a broken peer; MCP already refuses requests over 10 MiB before they get here. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Newline-delimited JSON on a socket: `onMessage` for each line, a malformed or oversized one ends the connection. */
export function readLines(socket: net.Socket, onMessage: (message: unknown) => void): void {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  socket.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      const line = pending.length ? Buffer.concat([...pending, piece]).toString('utf8') : piece.toString('utf8');
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        socket.destroy(new Error('the peer sent a line that is not JSON'));
        return;
      }
      onMessage(message);
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > MAX_LINE_BYTES) socket.destroy(new Error(`the peer sent a message over ${MAX_LINE_BYTES} bytes`));
    }
  });
}

export function send(socket: net.Socket, message: unknown): void {
  if (!socket.destroyed) socket.write(JSON.stringify(message) + '\n');
}

/** What a write's caller is told when the owner died before answering it: it may have been journaled, so it is never sent again. */
export function writeInDoubtReason(owner: Peer | undefined): string {
  const who = owner ? `process ${owner.pid} (${owner.kind})` : 'the owner';
  return (
    `The Recollect store's owner, ${who}, stopped while this write was in flight, so it may or may not have been saved. ` +
    `Check (for example with a search or read) before writing it again.`
  );
}

/** The sentence a client says when its owner speaks another protocol (or refused this one). */
export function versionRefusal(home: string, owner: Peer, me: Peer): string {
  return (
    `The Recollect store at ${home} is owned by process ${owner.pid} (${owner.kind}, build ${owner.build}, owner protocol ${owner.protocol}), ` +
    `and this process (build ${me.build}) speaks owner protocol ${me.protocol}, so it cannot use the store while that process runs. ` +
    `Nothing was read or written. Restart every Recollect process (VS Code windows, MCP servers) on one build.`
  );
}
