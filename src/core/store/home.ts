import * as os from 'node:os';
import * as path from 'node:path';

/**
 * One store home for the extension, the CLI and the MCP server, so that every surface
 * reads and writes the same memory. RECOLLECT_HOME wins because the MCP server and the CLI
 * are started by other programs that cannot see VS Code's settings.
 */
export function resolveStoreHome(opts: { env?: NodeJS.ProcessEnv; setting?: string | undefined } = {}): string {
  const env = opts.env ?? process.env;
  const chosen = env.RECOLLECT_HOME?.trim() || opts.setting?.trim() || path.join(os.homedir(), '.recollect');
  return path.resolve(expandTilde(chosen));
}

function expandTilde(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}
