import type * as vscode from 'vscode';
import type { Services } from '../core/services';
import { StoreLink } from '../core/owner/storeLink';

/**
 * The extension host's place on the store home. VS Code owns the store while it runs: with no
 * owner, this window claims it; an owner that is not VS Code (`recollect mcp`, `serve`) hands it
 * over and becomes this window's client. When another window (or a one-shot command, which keeps
 * the store until it exits) owns the store, this window opens a copy of its own beside it, as every
 * process did before owners (the journal's lock and catch-up keep both right), because the host's
 * views and commands still call Services directly.
 */
export function joinStoreAsHost(opts: { home: string; build: string; open: () => Promise<Services>; log: vscode.LogOutputChannel }): { services: Promise<Services>; close: () => Promise<void> } {
  const link = StoreLink.start({ home: opts.home, kind: 'vscode', build: opts.build, open: opts.open, log: (line) => opts.log.info(line), askHandover: true });
  let ownCopy: Promise<Services> | undefined;
  const services = link.ready().then(async (role) => {
    if (role === 'refused') throw new Error(link.refusedBecause());
    if (role === 'owner') {
      const s = await (link.ownServices() as Promise<Services>);
      s.storeRole = () => link.storeRole();
      return s;
    }
    const { owner } = link.storeRole();
    opts.log.info(`store owner: process ${owner.pid} (${owner.kind === 'vscode' ? 'another VS Code window' : owner.kind}) owns the store and keeps it; this window opens its own copy beside it`);
    await link.close();
    ownCopy = opts.open();
    const s = await ownCopy;
    s.storeRole = () => ({ owner, this_process: 'own copy', pid: process.pid });
    return s;
  });
  return {
    services,
    close: async () => {
      await link.close();
      await ownCopy?.then((s) => s.store.close(), () => undefined);
    },
  };
}
