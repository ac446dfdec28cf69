import * as vscode from 'vscode';
import { PoolClient, type PoolStatus } from '../core/pool/poolClient';
import { poolUrlProblem, redactPassword, resolvePool } from '../core/pool/poolConfig';
import { joinPool, leavePool } from '../core/pool/poolJoin';
import { PoolStateFile } from '../core/pool/poolState';
import { isRefusal } from '../core/refusal';
import { shareWithTeamPool } from './poolShareCommand';
import type { Services } from '../core/services';

/** The password of a pool URL lives in VS Code's secret storage under this key, never in settings.json. */
const secretKey = (url: string) => `recollect.pool.password:${url}`;

/**
 * The team pool in the extension host: a live PoolClient while a pool is configured
 * (RECOLLECT_POOL_URL, `recollect.pool.url` or a join), restarted when the settings change,
 * its state shown in the status bar; and the "Join Team Pool…" and "Leave Team Pool" commands.
 * The PoolClient syncs the store itself, so only the window that owns the store runs one (from
 * the moment it owns it: at start, or on taking over from a window that closed).
 */
export function registerTeamPool(context: vscode.ExtensionContext, deps: { own: () => Services | undefined; whenOwner: (fn: () => void) => void; home: string; log: vscode.LogOutputChannel; onStatus: (s: PoolStatus | undefined) => void }): vscode.Disposable[] {
  const state = new PoolStateFile(deps.home);
  let client: PoolClient | undefined;
  const config = () => vscode.workspace.getConfiguration('recollect.pool');

  const restart = async () => {
    await client?.stop();
    client = undefined;
    deps.onStatus(undefined);
    const target = resolvePool(process.env, { url: config().get<string>('url'), team: config().get<string>('team') }, state);
    if (!target) return;
    if (isRefusal(target)) {
      deps.log.warn(`team pool: ${target.reason}`);
      deps.onStatus({ state: 'refused', team: config().get<string>('team') ?? '?', behind: 0, unpushed: 0, pushed: 0, pulled: 0, reason: target.reason });
      return;
    }
    const services = deps.own();
    if (!services) {
      deps.log.info(`team pool ${target.team}: synced by the window that owns the store; this window is its client`);
      return;
    }
    const password = await context.secrets.get(secretKey(target.url));
    client = new PoolClient(services.store, { url: target.url, team: target.team, password }, state, {
      onStatus: (s) => {
        deps.onStatus(s);
        if (s.reason) deps.log.info(`team pool ${target.team}: ${s.state} — ${s.reason}`);
      },
    });
    deps.log.info(`team pool: syncing team ${target.team} at ${redactPassword(target.url)} (from ${target.from})`);
    client.start();
  };

  const join = async () => {
    const url = await vscode.window.showInputBox({
      title: 'Join Team Pool',
      prompt: 'The pool server: postgres://user@host:5432/database (add ?sslmode=require for TLS). No password here.',
      value: config().get<string>('url') || state.read().url || '',
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? poolUrlProblem(v.trim(), 'the URL') : 'a postgres:// URL'),
    });
    if (!url) return;
    const team = await vscode.window.showInputBox({ title: 'Join Team Pool', prompt: 'The team (empty: the only team this user belongs to)', value: config().get<string>('team') || '', ignoreFocusOut: true });
    if (team === undefined) return;
    const password = await vscode.window.showInputBox({ title: 'Join Team Pool', prompt: 'Password (kept in VS Code\'s secret storage; empty: PGPASSWORD or ~/.pgpass)', password: true, ignoreFocusOut: true });
    if (password === undefined) return;
    const joined = await joinPool({ url: url.trim(), team: team.trim() || undefined, password: password || undefined }, state);
    if (isRefusal(joined)) {
      void vscode.window.showErrorMessage(`Recollect: could not join the team pool: ${joined.reason}`);
      return;
    }
    if (password) await context.secrets.store(secretKey(joined.url), password);
    void vscode.window.showInformationMessage(`Recollect: joined team "${joined.team}". Writes in scope team:${joined.team} are shared; everything else stays on this machine.`);
    await restart();
  };

  const leave = async () => {
    const { left } = leavePool(state);
    await restart();
    void vscode.window.showInformationMessage(left ? `Recollect: left team "${left}". What was pulled stays in this store.` : 'Recollect: no team pool was joined.');
  };

  deps.whenOwner(() => void restart().catch((err: unknown) => deps.log.error(`team pool: ${(err as Error).message}`)));
  return [
    vscode.commands.registerCommand('recollect.joinTeamPool', join),
    vscode.commands.registerCommand('recollect.leaveTeamPool', leave),
    vscode.commands.registerCommand('recollect.shareWithTeamPool', () => shareWithTeamPool(state, { url: config().get<string>('url'), team: config().get<string>('team') })),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('recollect.pool') && void restart()),
    { dispose: () => void client?.stop() },
  ];
}
