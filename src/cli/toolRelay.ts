import { NotRunError, OwnerConnection, OwnerGoneError } from '../core/owner/ownerConnection';
import { ownerSocketPath } from '../core/owner/ownerSocket';
import { OWNER_PROTOCOL, writeInDoubtReason } from '../core/owner/protocol';
import { isRefusal, refuse } from '../core/refusal';
import { WriteRefusedError } from '../core/store/errors';

/**
 * `recollect tool <name> '<json>'` while an owner runs: the call is sent to the owner as any
 * client's is (`op: 'tool'`, validated and run there) without loading the full CLI, which would
 * cost a one-shot process its whole bundle for one call. Only light modules are imported here.
 * Undefined, with nothing done, when the full CLI must answer: no owner, another protocol's
 * owner, input that is not JSON, a tool the owner does not know (the full CLI prints the usage),
 * a call the owner did not run, or a read whose owner died before answering (asked again there).
 */
export async function relayTool(opts: { home: string; build: string; name: string; json: string | undefined; out: (text: string) => void }): Promise<number | undefined> {
  let input: unknown = {};
  if (opts.json !== undefined) {
    try {
      input = JSON.parse(opts.json);
    } catch {
      return undefined;
    }
  }
  const answer = await OwnerConnection.open(ownerSocketPath(opts.home), { protocol: OWNER_PROTOCOL, build: opts.build, pid: process.pid, kind: 'cli' });
  if (answer.kind !== 'connected') return undefined;
  const { connection, owner, readOnlyTools } = answer;
  try {
    await connection.request({ op: 'connection.seen', name: 'cli' }).catch(() => undefined);
    let result: unknown;
    try {
      result = await connection.request({ op: 'tool', name: opts.name, input, client: 'cli', workspace: process.cwd() });
    } catch (err) {
      if (err instanceof NotRunError) return undefined;
      if (err instanceof OwnerGoneError) {
        if (readOnlyTools.includes(opts.name)) return undefined;
        result = refuse(writeInDoubtReason(owner));
      } else if (err instanceof WriteRefusedError) {
        result = refuse(err.reason, err.budget);
      } else if (/^unknown tool "/.test((err as Error).message)) {
        return undefined;
      } else throw err;
    }
    opts.out(JSON.stringify(result, null, 2) + '\n');
    return isRefusal(result) ? 3 : 0;
  } finally {
    connection.close();
  }
}
