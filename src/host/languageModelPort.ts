import * as vscode from 'vscode';
import { ModelUnavailableError, type CompleteOptions, type LanguageModelPort, type ModelMessage, type ModelReply, type ModelToolCall } from '../core/lcm/languageModel';

/**
 * What a model is used for. Each use has its own on/off setting and its own consent, because
 * each sends different history to the model and a person may allow one and not the other.
 */
export interface ModelPurpose {
  /** Under `recollect.`; the use is off unless it is true. */
  setting: string;
  /** globalState key for 'granted' or 'declined', remembered across windows; switching the setting on again asks afresh. */
  consentKey: string;
  question: string;
  /** For the log: "language model for <label>". */
  label: string;
}

/** The port plus the reason it cannot be used, which only the host can tell (setting, consent, API, installed models). */
export interface HostLanguageModelPort extends LanguageModelPort {
  /** Why no model can be used now, or undefined when one may be. */
  unavailableReason(): string | undefined;
}

export const LCM_PURPOSE: ModelPurpose = {
  setting: 'lcm.useLanguageModel',
  consentKey: 'recollect.lcm.modelConsent',
  question: 'Recollect can send parts of your imported chat history to a Copilot language model, to summarise it and to answer lcm_expand_query questions. Allow it?',
  label: 'summaries',
};

/**
 * Core's LanguageModelPort over vscode.lm. Off unless the person turns on the purpose's setting
 * (recollect.lcm.useLanguageModel for summaries), and then it asks once before any history is sent to a model.
 * Every API it touches is feature-detected: without vscode.lm (or tool calling) it reports
 * itself unavailable and core falls back to the extractive summariser and excerpt answers.
 */
export function createLanguageModelPort(context: vscode.ExtensionContext, log: vscode.LogOutputChannel, purpose: ModelPurpose = LCM_PURPOSE): HostLanguageModelPort {
  const { setting: SETTING, consentKey: CONSENT_KEY } = purpose;
  let chosen: vscode.LanguageModelChat | undefined;
  let asking: Promise<boolean> | undefined;
  const enabled = () => vscode.workspace.getConfiguration('recollect').get<boolean>(SETTING) === true;
  const consent = () => context.globalState.get<string>(CONSENT_KEY);
  // Learnt in the background and kept fresh, so "there is no model here" (code-server, no Copilot)
  // is known synchronously, before anyone is asked to consent to a model that does not exist.
  let modelCount: number | undefined;
  const countModels = () => {
    if (apiPresent()) void vscode.lm.selectChatModels().then((models) => (modelCount = models.length), () => (modelCount = undefined));
  };
  countModels();
  const unavailableReason = (): string | undefined => {
    if (!enabled()) return `the setting recollect.${SETTING} is off`;
    if (consent() === 'declined') return `the person declined sending history to a language model for ${purpose.label} (switch recollect.${SETTING} off and on to be asked again)`;
    if (!apiPresent()) return 'this VS Code has no language model API';
    if (modelCount === 0) return 'no chat model is available in this VS Code (no Copilot or other model provider is installed and signed in)';
    return undefined;
  };

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(`recollect.${SETTING}`)) return;
      chosen = undefined;
      if (enabled()) void context.globalState.update(CONSENT_KEY, undefined);
    }),
  );
  if (typeof vscode.lm?.onDidChangeChatModels === 'function') {
    context.subscriptions.push(
      vscode.lm.onDidChangeChatModels(() => {
        chosen = undefined;
        countModels();
      }),
    );
  }

  const ask = async (): Promise<boolean> => {
    const pick = await vscode.window.showInformationMessage(
      purpose.question,
      'Allow',
      'Not now',
    );
    if (pick === undefined) return false; // dismissed: ask again another time
    await context.globalState.update(CONSENT_KEY, pick === 'Allow' ? 'granted' : 'declined');
    log.info(`language model for ${purpose.label}: ${pick === 'Allow' ? 'allowed' : 'declined'} by the user`);
    return pick === 'Allow';
  };

  const permitted = async (background: boolean): Promise<boolean> => {
    const state = consent();
    if (state === 'granted') return true;
    if (state === 'declined') return false;
    asking ??= ask().finally(() => (asking = undefined));
    // A background summary does not wait for the person: it is written without a model meanwhile.
    return background ? false : asking;
  };

  const select = async (): Promise<vscode.LanguageModelChat> => {
    if (chosen) return chosen;
    const models = (await vscode.lm.selectChatModels({ vendor: 'copilot' })).concat(await vscode.lm.selectChatModels());
    const model = models[0];
    if (!model) throw new ModelUnavailableError('no chat model is available in this VS Code');
    chosen = model;
    log.info(`language model for ${purpose.label}: ${model.vendor}/${model.id}`);
    return model;
  };

  return {
    available: () => unavailableReason() === undefined,
    unavailableReason,
    describe: () => (chosen ? `${chosen.vendor}/${chosen.id}` : 'vscode-lm'),
    async complete(messages: ModelMessage[], options: CompleteOptions, signal: AbortSignal): Promise<ModelReply> {
      const off = unavailableReason();
      if (off) throw new ModelUnavailableError(off);
      // The model first: asking consent for one that turns out not to exist would be a question for nothing.
      const model = await select();
      if (!(await permitted(options.background === true))) throw new ModelUnavailableError('the person has not allowed a language model');
      const cts = new vscode.CancellationTokenSource();
      const onAbort = () => cts.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const tools = options.tools?.length && toolCallingPresent() ? options.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })) : undefined;
        const response = await model.sendRequest(
          messages.map(toChatMessage),
          { ...(options.justification ? { justification: options.justification } : {}), ...(tools ? { tools, toolMode: vscode.LanguageModelChatToolMode.Auto } : {}) },
          cts.token,
        );
        return await readReply(response);
      } catch (err) {
        if (isPermissionError(err)) throw new ModelUnavailableError((err as Error).message);
        throw err;
      } finally {
        signal.removeEventListener('abort', onAbort);
        cts.dispose();
      }
    },
  };
}

function apiPresent(): boolean {
  return typeof vscode.lm?.selectChatModels === 'function' && typeof vscode.LanguageModelChatMessage?.User === 'function';
}

function toolCallingPresent(): boolean {
  return typeof vscode.LanguageModelToolCallPart === 'function' && typeof vscode.LanguageModelToolResultPart === 'function' && vscode.LanguageModelChatToolMode !== undefined;
}

/** vscode.lm has no system role: instructions travel as the first user message. */
function toChatMessage(m: ModelMessage): vscode.LanguageModelChatMessage {
  switch (m.role) {
    case 'system':
    case 'user':
      return vscode.LanguageModelChatMessage.User(m.content);
    case 'assistant':
      if (!m.toolCalls?.length || !toolCallingPresent()) return vscode.LanguageModelChatMessage.Assistant(m.content);
      return vscode.LanguageModelChatMessage.Assistant([
        ...(m.content ? [new vscode.LanguageModelTextPart(m.content)] : []),
        ...m.toolCalls.map((c) => new vscode.LanguageModelToolCallPart(c.id, c.name, (c.input ?? {}) as object)),
      ]);
    case 'tool':
      if (!toolCallingPresent()) return vscode.LanguageModelChatMessage.User(`Result of ${m.name}: ${m.content}`);
      return vscode.LanguageModelChatMessage.User([new vscode.LanguageModelToolResultPart(m.toolCallId, [new vscode.LanguageModelTextPart(m.content)])]);
  }
}

async function readReply(response: vscode.LanguageModelChatResponse): Promise<ModelReply> {
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  if (response.stream) {
    for await (const part of response.stream) {
      if (part instanceof vscode.LanguageModelTextPart) text += part.value;
      else if (toolCallingPresent() && part instanceof vscode.LanguageModelToolCallPart) toolCalls.push({ id: part.callId, name: part.name, input: part.input });
    }
  } else {
    for await (const chunk of response.text) text += chunk;
  }
  return { text, toolCalls };
}

/** The person refused VS Code's own permission prompt, or the model went away: fall back, do not fail. */
function isPermissionError(err: unknown): boolean {
  if (typeof vscode.LanguageModelError !== 'function' || !(err instanceof vscode.LanguageModelError)) return false;
  return err.code === vscode.LanguageModelError.NoPermissions().code || err.code === vscode.LanguageModelError.NotFound().code;
}
