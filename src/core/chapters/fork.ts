import { newId } from '../ids';
import { isRefusal, refuse, type Refusal } from '../refusal';
import type { Store } from '../store/store';
import { textProblem } from '../text/textRules';
import { composeFirstMessage, coverageGaps, planFor, readSessionState, tocChapters, type Budget } from './planning';
import { resolvePreset, type PresetName, type PresetUsed } from './presets';
import { newMarker } from './toc';

export interface ForkRequest {
  sessionId: string;
  note: string;
  preset?: PresetName | undefined;
  budgetTokens?: number | undefined;
}

export interface ForkResult {
  ok: true;
  childSessionId: string;
  marker: string;
  presetUsed: PresetUsed;
  budget: Budget;
  /** The archive the branch cites: chapter ids in table-of-contents order. */
  cites: string[];
  warnings: string[];
  firstMessage: string;
}

/**
 * The model's branch intent: a first message that cites the archive as it stands, and nothing
 * written anywhere — no chapter, no child record. The marker in that message names the parent,
 * so the branch is linked when its chat session is imported.
 */
export function forkCitation(store: Store, req: ForkRequest): ForkResult | Refusal {
  const problem = textProblem('handoffNote', req.note);
  if (problem) return refuse(`${problem}. Nothing was written.`);
  const state = readSessionState(store, req.sessionId);
  if (isRefusal(state)) return state;
  const preset = resolvePreset(req.preset, req.budgetTokens);
  const toc = tocChapters(state, [], state.ceiling.archiveCeiling);
  const marker = newMarker();
  const first = composeFirstMessage(state, { marker, intent: 'fork', chapters: toc, plan: planFor(store, toc, []), note: req.note, preset });
  if (isRefusal(first)) return first;
  const warnings = coverageGaps(state, toc, state.ceiling.archiveCeiling).map(
    (gap) => `${gap} of this session are not archived, so the branch cannot open them; chapters_continue archives them (a person's /fork archives and branches in one step).`,
  );
  if (!toc.length) warnings.push('nothing is archived yet: the branch carries only your note.');
  return { ok: true, childSessionId: `rcs_${newId(store.now)}`, marker, presetUsed: preset, budget: first.budget, cites: toc.map((c) => c.id), warnings, firstMessage: first.text };
}
