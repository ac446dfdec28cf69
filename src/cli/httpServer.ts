import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { connectionProblem } from '../core/requests/connectionName';
import type { Services } from '../core/services';
import type { StoreAccess } from '../core/owner/storeAccess';
import { MAX_REQUEST_BYTES, requestTooLarge } from '../core/tools/requestLimit';
import { bearerMatches, hostAllowed, isOAuthDiscovery, originAllowed } from './httpGuards';
import { createMcpServer } from './mcpServer';

/** Only this machine can reach the server; there is deliberately no option to bind elsewhere. */
export const LOOPBACK = '127.0.0.1';
export const DEFAULT_PORT = 7377;
export const MCP_PATH = '/mcp';
/** How a person names one HTTP connection (one client's sessions): `/mcp?name=<name>`, or this header. */
export const CONNECTION_NAME_QUERY = 'name';
export const CONNECTION_NAME_HEADER = 'x-recollect-connection';
/** Sessions kept at once; a client that never says goodbye loses its session to newer ones, least recently used first. */
const MAX_SESSIONS = 64;

export interface HttpServeOptions {
  services: Services | StoreAccess;
  version: string;
  /** 0 picks a free port (tests). */
  port: number;
  token: string;
  workspace?: string | undefined;
}

export interface RunningHttpServer {
  url: string;
  address: AddressInfo;
  sessions(): number;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastUsed: number;
}

/**
 * MCP over Streamable HTTP on loopback. Every request must carry the bearer token and come
 * from no origin or a loopback one (DNS rebinding); each MCP session gets its own Server,
 * named by its own client, over the one set of services this process holds.
 */
export async function startHttpServer(opts: HttpServeOptions): Promise<RunningHttpServer> {
  const sessions = new Map<string, Session>();

  async function openSession(req: http.IncomingMessage, res: http.ServerResponse, body: unknown, connectionName: string | undefined): Promise<void> {
    if (sessions.size >= MAX_SESSIONS) {
      const [oldestId, oldest] = [...sessions.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0] ?? [];
      if (oldestId && oldest) {
        sessions.delete(oldestId);
        await oldest.transport.close();
      }
    }
    const server = createMcpServer(opts.services, opts.version, { workspace: opts.workspace, connectionName });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // The same bound as stdio (the SDK's own default is 4 MiB); a larger body gets a 413.
      maxRequestBodySize: MAX_REQUEST_BYTES,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, lastUsed: Date.now() });
      },
    });
    // Set before connect: the server chains its own close handling onto this one.
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!hostAllowed(req.headers.host) || !originAllowed(req.headers.origin)) {
      return deny(res, 403, 'requests must come from this machine: the Host and any Origin header must be loopback (127.0.0.1, localhost, [::1])');
    }
    // No OAuth here: a client that finds no discovery document asks for the bearer token
    // instead of trying (and reporting the failure of) dynamic client registration.
    if (isOAuthDiscovery(req.url ?? '/')) return deny(res, 404, 'no OAuth here: this server takes the bearer token in the store home\'s mcp-http-token file (Authorization: Bearer <token>)');
    if (!bearerMatches(req.headers.authorization, opts.token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="recollect"');
      return deny(res, 401, 'missing or wrong bearer token: send Authorization: Bearer <the token in the store home\'s mcp-http-token file>');
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== MCP_PATH) return deny(res, 404, `the MCP endpoint is ${MCP_PATH}`);

    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session) return rpcError(res, 404, 'Session not found: it ended or was never started; initialize a new one');
      session.lastUsed = Date.now();
      if (req.method !== 'POST') return session.transport.handleRequest(req, res);
      // Read here rather than by the SDK, so a body over the bound is refused with its measured size.
      const posted = await readJson(req, res);
      if (posted === undefined) return;
      return session.transport.handleRequest(req, res, posted);
    }
    if (req.method !== 'POST') return rpcError(res, 400, 'Bad Request: no Mcp-Session-Id; start with an initialize request');
    const body = await readJson(req, res);
    if (body === undefined) return;
    if (!isInitializeRequest(body)) return rpcError(res, 400, 'Bad Request: no Mcp-Session-Id; start with an initialize request');
    const named = connectionNameOf(req, url);
    if (named !== undefined) {
      const problem = connectionProblem(named);
      if (problem) return rpcError(res, 400, `Bad Request: the connection name "${named.slice(0, 100)}" cannot be used: ${problem}`);
    }
    await openSession(req, res, body, named);
  }

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) rpcError(res, 500, `internal error: ${err instanceof Error ? err.message : String(err)}`, -32603);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`port ${opts.port} on ${LOOPBACK} is in use; choose another with --port`) : err),
    );
    httpServer.listen(opts.port, LOOPBACK, () => resolve());
  });
  const address = httpServer.address() as AddressInfo;

  return {
    url: `http://${LOOPBACK}:${address.port}${MCP_PATH}`,
    address,
    sessions: () => sessions.size,
    async close() {
      await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => undefined)));
      sessions.clear();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}

/** The name a person gave this connection in the URL's query or a header; the query wins. */
function connectionNameOf(req: http.IncomingMessage, url: URL): string | undefined {
  const header = req.headers[CONNECTION_NAME_HEADER];
  const named = url.searchParams.get(CONNECTION_NAME_QUERY) ?? (Array.isArray(header) ? header[0] : header);
  return named?.trim() ? named.trim() : undefined;
}

async function readJson(req: http.IncomingMessage, res: http.ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Counted to the end, so the refusal gives the real size; nothing past the limit is kept.
    if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
  }
  if (size > MAX_REQUEST_BYTES) {
    rpcError(res, 413, requestTooLarge(size));
    return undefined;
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    rpcError(res, 400, 'Parse error: the body is not JSON', -32700);
    return undefined;
  }
}

function deny(res: http.ServerResponse, status: number, reason: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ok: false, reason }));
}

function rpcError(res: http.ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
