import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, type McpSession } from './mcpClient';

export interface ServeProcess {
  proc: ChildProcess;
  url: string;
  port: number;
  /** The address the server reports it bound to. */
  bound: string;
  tokenFile: string;
  token: string;
  /** Everything the server printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts the real `recollect serve --port 0` and reads the URL and token path it prints. */
export async function startServe(home: string, env: Record<string, string> = {}): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { env: { ...process.env, RECOLLECT_HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const ready = await new Promise<{ url: string; bound: string; tokenFile: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out} ${err}`)), 30_000);
    proc.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out} ${err}`)));
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /listening on (\S+) \(bound to (\S+)\)/.exec(out);
      const token = /bearer token in (\S+);/.exec(out);
      if (url && token) {
        clearTimeout(timer);
        resolve({ url: url[1] as string, bound: url[2] as string, tokenFile: token[1] as string });
      }
    });
  });
  return {
    proc,
    ...ready,
    port: Number(new URL(ready.url).port),
    token: fs.readFileSync(ready.tokenFile, 'utf8').trim(),
    output: () => out + err,
    async stop() {
      // A server killed by a signal has exitCode null but signalCode set: it is gone already.
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** The official SDK client over Streamable HTTP, with the bearer token. */
export async function connectHttp(url: string, token: string, clientName: string): Promise<Pick<McpSession, 'client' | 'call' | 'close'>> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    async call(name, args) {
      const res = await client.callTool({ name, arguments: args });
      const content = res.content as { type: string; text: string }[];
      return JSON.parse(content[0]?.text ?? '{}') as Record<string, unknown>;
    },
    close: () => client.close(),
  };
}
