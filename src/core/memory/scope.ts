/**
 * `global`, `project:<slug>`, or `team:<name>` (shared through the team pool, docs/team-pool.md);
 * anything else is refused so a typo cannot create a silent new scope.
 */
const SCOPE = /^(global|(project|team):[A-Za-z0-9][A-Za-z0-9._-]{0,99})$/;

export const DEFAULT_SCOPE = 'global';

export function scopeProblem(scope: string): string | undefined {
  return SCOPE.test(scope) ? undefined : `scope "${scope.slice(0, 120)}" is not "global", "project:<slug>" or "team:<name>" (slug, name: letters, digits, . _ -)`;
}
