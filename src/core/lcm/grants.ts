import { randomBytes } from 'node:crypto';

/**
 * lcm_expand reads raw history without a question to bound it, so it is reachable only by the
 * sub-agent lcm_expand_query starts: that loop holds a random token that lives in this process
 * only, is scoped to the conversations being expanded, carries the token budget, and expires.
 * No surface (VS Code, MCP, CLI) can pass one in.
 */
export interface ExpandGrant {
  token: string;
  sessionIds: ReadonlySet<string>;
  expiresAt: number;
  budget: number;
  used: number;
}

export class ExpandGrants {
  private readonly grants = new Map<string, ExpandGrant>();

  constructor(private readonly now: () => number) {}

  issue(sessionIds: Iterable<string>, ttlMs: number, budget: number): ExpandGrant {
    this.sweep();
    const grant: ExpandGrant = { token: randomBytes(24).toString('base64url'), sessionIds: new Set(sessionIds), expiresAt: this.now() + ttlMs, budget, used: 0 };
    this.grants.set(grant.token, grant);
    return grant;
  }

  /** The live grant for a token, or why there is none. */
  check(token: string | undefined): ExpandGrant | { refused: string } {
    if (!token) return { refused: 'no expansion grant' };
    const grant = this.grants.get(token);
    if (!grant) return { refused: 'the expansion grant is unknown or was revoked' };
    if (this.now() >= grant.expiresAt) {
      this.grants.delete(token);
      return { refused: 'the expansion grant expired' };
    }
    return grant;
  }

  revoke(token: string): void {
    this.grants.delete(token);
  }

  get live(): number {
    this.sweep();
    return this.grants.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [token, g] of this.grants) if (now >= g.expiresAt) this.grants.delete(token);
  }
}
