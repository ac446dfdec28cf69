import * as vscode from 'vscode';
import { decisionModelOver, type DecisionModel } from '../core/history/decisionModel';
import { createLanguageModelPort, type ModelPurpose } from './languageModelPort';

const WITHHOLD: ModelPurpose = {
  setting: 'history.withholdUnrelatedRuns',
  consentKey: 'recollect.history.withholdConsent',
  question:
    'Recollect can send the opening of long past chat runs, with your current request, to a Copilot language model, so chat_history can leave out the runs unrelated to what you are doing. Allow it?',
  label: 'withholding unrelated runs',
};

/**
 * chat_history's decision model: a VS Code language model behind its own setting (off by
 * default) and its own consent, asked on first use like the lcm summariser's.
 */
export function createDecisionModel(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): DecisionModel {
  const port = createLanguageModelPort(context, log, WITHHOLD);
  return decisionModelOver(port, () => port.unavailableReason() ?? 'the language model became unavailable', 'To judge which past chat runs are unrelated to your current request');
}
