import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { replaceFileDurably } from '../store/durableFile';

/** `<home>/pool.json`: which pool this store joined, its identity there, and how far its journal was pushed. */
export const POOL_STATE_FILE = 'pool.json';

export interface PoolState {
  /** This store's identity in the pool; kept when leaving, so a later join never pulls its own operations back. */
  origin: string;
  /** The pool's URL without a password, when joined. */
  url?: string | undefined;
  team?: string | undefined;
  /** The journal offset up to which this store's team operations are on the pool. */
  pushedOffset: number;
  /** What has no scope of its own and is recorded in the team's scope from now on (teamShare.ts). */
  share?: SharedRecords | undefined;
}

/** The kinds of records without a memory scope that a person may mark for a team. */
export const SHARED_KINDS = ['errors', 'chapters', 'rules'] as const;
export type SharedKind = (typeof SHARED_KINDS)[number];

export interface SharedRecords {
  team: string;
  kinds: SharedKind[];
}

function sharedRecords(raw: unknown): SharedRecords | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const { team, kinds } = raw as { team?: unknown; kinds?: unknown };
  if (typeof team !== 'string' || !team || !Array.isArray(kinds)) return undefined;
  return { team, kinds: SHARED_KINDS.filter((k) => kinds.includes(k)) };
}

export class PoolStateFile {
  readonly file: string;

  constructor(home: string) {
    this.file = path.join(home, POOL_STATE_FILE);
  }

  read(): PoolState {
    try {
      const raw = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Partial<PoolState>;
      if (typeof raw.origin === 'string' && raw.origin) {
        return { origin: raw.origin, url: typeof raw.url === 'string' ? raw.url : undefined, team: typeof raw.team === 'string' ? raw.team : undefined, pushedOffset: Number(raw.pushedOffset) || 0, share: sharedRecords(raw.share) };
      }
    } catch {
      // Missing or unreadable: a fresh identity at the next write, and everything is pushed again (the pool ignores what it has).
    }
    // Not written here: a store that never joins a pool gets no pool.json. `update` and
    // `origin` write it, so an identity is fixed before anything is pushed under it.
    return { origin: '', pushedOffset: 0 };
  }

  /** This store's identity in the pool, created and recorded the first time it is asked for. */
  origin(): string {
    const state = this.read();
    if (state.origin) return state.origin;
    return this.update({}).origin;
  }

  write(state: PoolState): void {
    replaceFileDurably(this.file, JSON.stringify(state, null, 2) + '\n');
    try {
      fs.chmodSync(this.file, 0o600);
    } catch {
      // Best effort, as for the store's other files.
    }
  }

  update(change: Partial<PoolState>): PoolState {
    const current = this.read();
    const next = { ...current, origin: current.origin || randomUUID(), ...change };
    this.write(next);
    return next;
  }
}
