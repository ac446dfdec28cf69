import type * as vscode from 'vscode';
import { remoteServices, type RemoteServices } from '../core/owner/serviceProxy';
import { StoreLink, type StoreLinkOptions } from '../core/owner/storeLink';
import type { Services } from '../core/services';

/** The store as this window uses it, whether it owns it or is a client of the process that does. */
export interface HostStore {
  link: StoreLink;
  /**
   * Services for the window's views, commands, tools and language server: every call answers
   * asynchronously, from this window's store while it owns it and from the owner's otherwise.
   * Resolves once the election settled (the owner's store open); rejects with why this window
   * cannot use the store.
   */
  services: Promise<RemoteServices>;
  /** This window's own services, resolved only if it owns the store from the start (the extension's API, for tests). */
  own: Promise<Services>;
  /** This window's own services while it owns the store (its store open), else undefined. */
  ownNow(): Services | undefined;
  /** Runs `fn` on this window's own services each time it becomes the owner (at start, or by taking over from a closed owner). */
  whenOwner(fn: (s: Services, takeover: boolean) => void): void;
  close(): Promise<void>;
}

/**
 * The extension host's place on the store home. VS Code owns the store while it runs: with no
 * owner, this window claims it; an owner that is not VS Code (`recollect mcp`, `serve`) hands it
 * over and becomes this window's client. When another window (or a one-shot command) owns the
 * store, this window is its client: it never opens a copy of its own, and when the owner closes,
 * it (or another client) takes over as any client does.
 */
export function joinStoreAsHost(opts: { home: string; build: string; open: () => Promise<Services>; log: vscode.LogOutputChannel; mcpSession?: StoreLinkOptions['mcpSession'] }): HostStore {
  const link = StoreLink.start({ home: opts.home, kind: 'vscode', build: opts.build, open: opts.open, log: (line) => opts.log.info(line), askHandover: true, mcpSession: opts.mcpSession });
  const remote = remoteServices(link);
  const owned: ((s: Services, takeover: boolean) => void)[] = [];
  let current: Services | undefined;
  link.onRole((role, takeover) => {
    current = undefined;
    if (role !== 'owner') return;
    void link.ownServices()?.then((s) => {
      s.storeRole = () => link.storeRole();
      current = s;
      for (const fn of owned) fn(s, takeover);
    }, () => undefined);
  });
  const settled = link.ready().then(async (role) => {
    if (role === 'refused') throw new Error(link.refusedBecause());
    if (role === 'owner') return { role, services: await (link.ownServices() as Promise<Services>) };
    const { owner } = link.storeRole();
    opts.log.info(`store owner: process ${owner.pid} (${owner.kind === 'vscode' ? 'another VS Code window' : owner.kind}) owns the store; this window is its client`);
    return { role, services: undefined };
  });
  const own = settled.then((r) => r.services ?? Promise.reject(new Error('this window is a client of the process that owns the store; it holds no store of its own')));
  // Asked for only by the extension's API (tests); a client window's rejection is no failure.
  own.catch(() => undefined);
  return {
    link,
    services: settled.then(() => remote),
    own,
    ownNow: () => current,
    whenOwner: (fn) => {
      owned.push(fn);
      if (current) fn(current, false);
    },
    close: () => link.close(),
  };
}
