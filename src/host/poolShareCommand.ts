import * as vscode from 'vscode';
import { resolvePool, type PoolSettings } from '../core/pool/poolConfig';
import { SHARED_KINDS, type PoolStateFile, type SharedKind } from '../core/pool/poolState';
import { isRefusal } from '../core/refusal';

const LABELS: Record<SharedKind, { label: string; detail: string }> = {
  errors: { label: 'Error fixes', detail: 'what write_error records from now on' },
  chapters: { label: 'Chapter archives and their plans', detail: 'verbatim chat: what Continue/Fork with chapters archives from now on' },
  rules: { label: 'Rule proposals', detail: 'the proposals only; each machine approves for itself' },
};

/**
 * "Recollect: Share with Team Pool…": the person picks which records without a memory scope of
 * their own are written in the joined team's scope from now on (the same choice as
 * `recollect pool share`, kept in pool.json for every process of this store).
 */
export async function shareWithTeamPool(state: PoolStateFile, settings: PoolSettings): Promise<void> {
  const target = resolvePool(process.env, settings, state);
  if (!target || isRefusal(target)) {
    void vscode.window.showErrorMessage(`Recollect: join a team pool first${target ? ` (${target.reason})` : ''}.`);
    return;
  }
  const current = state.read().share;
  const picked = await vscode.window.showQuickPick(
    SHARED_KINDS.map((shared) => ({ ...LABELS[shared], shared, picked: current?.team === target.team && current.kinds.includes(shared) })),
    { title: `Share with team ${target.team}`, placeHolder: 'Recorded from now on in scope team:' + target.team + '; what was recorded before stays on this machine', canPickMany: true, ignoreFocusOut: true },
  );
  if (!picked) return;
  const kinds = picked.map((p) => p.shared);
  state.update({ share: kinds.length ? { team: target.team, kinds } : undefined });
  void vscode.window.showInformationMessage(kinds.length ? `Recollect: from now on ${picked.map((p) => p.label.toLowerCase()).join(', ')} are shared with team "${target.team}".` : 'Recollect: nothing without a scope of its own is shared any more; what was sent stays on the pool.');
}
