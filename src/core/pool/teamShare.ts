import { PoolStateFile, type SharedKind } from './poolState';
import { teamScope } from './teamScope';

/**
 * Error fixes, chapter archives (with their plans) and rule proposals have no memory scope of
 * their own, and the spec gives their tools no scope argument. A person marks them for a team
 * once per store instead (`recollect pool share <team> errors,chapters,rules`, kept in
 * pool.json so the extension, the MCP server and the CLI sharing the store all follow it): a
 * record of a marked kind is written in scope `team:<name>` from then on. The scope is fixed in
 * the journal line when it is written, so turning sharing on later never sends what was recorded
 * before, and turning it off never withdraws what was sent.
 */
export function sharedScope(home: string, kind: SharedKind): string | undefined {
  const share = new PoolStateFile(home).read().share;
  return share?.kinds.includes(kind) ? teamScope(share.team) : undefined;
}
