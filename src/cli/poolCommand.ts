import { isRefusal, refuse, type Refusal } from '../core/refusal';
import type { Services } from '../core/services';
import { PoolClient, type PoolStatus } from '../core/pool/poolClient';
import { redactPassword, resolvePool } from '../core/pool/poolConfig';
import { joinPool, leavePool } from '../core/pool/poolJoin';
import { PoolStateFile, SHARED_KINDS, type SharedRecords } from '../core/pool/poolState';
import { poolTeamProblem } from '../core/pool/poolServer';

export const POOL_USAGE = `recollect pool join <postgres://user@host/db> [--team <name>]
                                         join a team pool (password: PGPASSWORD or ~/.pgpass, never in the URL)
  recollect pool status                  connected / offline / behind by N, and what is left to push
  recollect pool sync [--watch] [--batch N]
                                         push this store's team operations and pull the others' (--watch: stay live)
  recollect pool leave                   stop syncing (what was pulled stays in this store)
  recollect pool share <team> <errors,chapters,rules> | none
                                         record these kinds in scope team:<team> from now on (they have no scope of their own)`;

type Print = (text: string) => void;

const EXIT = { answered: 0, usage: 2, refused: 3 } as const;

/** `recollect pool …`: the store is opened only by the commands that need it. */
export async function poolCommand(args: string[], home: string, withServices: (fn: (s: Services) => Promise<number>) => Promise<number>, print: Print): Promise<number> {
  const [sub, ...rest] = args;
  const state = new PoolStateFile(home);
  const json = (value: unknown) => print(JSON.stringify(value, null, 2) + '\n');
  switch (sub) {
    case 'join': {
      const url = rest[0];
      if (!url || url.startsWith('--')) return usageError(print);
      const team = flag(rest, '--team');
      if (team === null) return usageError(print);
      const joined = await joinPool({ url, team }, state);
      json(isRefusal(joined) ? joined : { ok: true, joined: joined.team, url: redactPassword(joined.url) });
      return isRefusal(joined) ? EXIT.refused : EXIT.answered;
    }
    case 'share': {
      const [team, kinds] = rest;
      if (team === 'none' && kinds === undefined) {
        state.update({ share: undefined });
        json({ ok: true, shared: null });
        return EXIT.answered;
      }
      const chosen = kinds?.split(',').map((k) => k.trim());
      const unknown = chosen?.filter((k) => !(SHARED_KINDS as readonly string[]).includes(k));
      if (!team || !chosen || unknown?.length) {
        if (unknown?.length) json(refuse(`${unknown.join(', ')}: not a kind that can be shared; choose from ${SHARED_KINDS.join(', ')}`));
        return usageError(print);
      }
      const bad = poolTeamProblem(team);
      if (bad) {
        json(refuse(bad));
        return EXIT.refused;
      }
      const share = { team, kinds: SHARED_KINDS.filter((k) => chosen.includes(k)) };
      state.update({ share });
      json({ ok: true, shared: share, note: `from now on these are recorded in scope team:${team}; what was recorded before stays on this machine` });
      return EXIT.answered;
    }
    case 'leave':
      json({ ok: true, ...leavePool(state) });
      return EXIT.answered;
    case 'status':
    case 'sync': {
      const target = resolvePool(process.env, {}, state);
      if (!target) {
        json({ ok: true, state: 'not joined', note: 'run "recollect pool join <url>" or set RECOLLECT_POOL_URL' });
        return sub === 'status' ? EXIT.answered : EXIT.refused;
      }
      if (isRefusal(target)) {
        json(target);
        return EXIT.refused;
      }
      const batch = flag(rest, '--batch');
      const batchSize = batch === undefined || batch === null ? undefined : Number(batch);
      if (batch === null || (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize > 0))) return usageError(print);
      const watching = sub === 'sync' && rest.includes('--watch');
      // Live, each change of state is one JSON line, so a script (or a test) can follow it.
      const onStatus = watching ? (st: PoolStatus) => print(JSON.stringify({ url: redactPassword(target.url), ...st }) + '\n') : undefined;
      return withServices(async (s) => {
        const client = new PoolClient(s.store, { url: target.url, team: target.team }, state, { ...(batchSize ? { batchSize } : {}), ...(onStatus ? { onStatus } : {}) });
        try {
          if (sub === 'status') return report(json, target.url, await statusOf(client), state.read().share);
          if (watching) return await watch(client);
          const r = await client.sync();
          if (isRefusal(r)) return report(json, target.url, r);
          json({ ok: true, ...client.current, ...r });
          return EXIT.answered;
        } finally {
          await client.stop();
        }
      });
    }
    default:
      return usageError(print);
  }
}

async function statusOf(client: PoolClient): Promise<PoolStatus | Refusal> {
  const connected = await client.connect();
  if (connected !== true) return { ...client.current, ...connected };
  const behind = await client.behind();
  return { ...client.current, state: behind > 0 ? 'behind' : 'connected', behind };
}

function report(json: (v: unknown) => void, url: string, r: PoolStatus | Refusal, shared?: SharedRecords): number {
  json({ url: redactPassword(url), ...r, ...(shared ? { shared } : {}) });
  return 'ok' in r && r.ok === false && (r as { state?: string }).state !== 'offline' ? EXIT.refused : EXIT.answered;
}

/** Stays live until SIGINT/SIGTERM. */
async function watch(client: PoolClient): Promise<number> {
  const done = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  client.start();
  await done;
  return EXIT.answered;
}

function flag(args: string[], name: string): string | undefined | null {
  const i = args.indexOf(name);
  if (i === -1) return undefined;
  const value = args[i + 1];
  return value === undefined || value.startsWith('--') ? null : value;
}

function usageError(print: Print): number {
  print(`usage: ${POOL_USAGE}\n`);
  return EXIT.usage;
}
