import type { CompleteOptions, LanguageModelPort, ModelMessage, ModelReply } from '../../../src/core/lcm/languageModel';

export interface ScriptedCall {
  messages: ModelMessage[];
  options: CompleteOptions;
  signal: AbortSignal;
}

/**
 * A scripted stand-in for a Copilot language model, which cannot run here: each call gets the
 * script's reply for that turn. Tests that use it say "scripted model" in their names.
 */
export class ScriptedModel implements LanguageModelPort {
  readonly calls: ScriptedCall[] = [];
  on = true;

  constructor(private readonly script: (call: ScriptedCall, turn: number) => ModelReply | Promise<ModelReply>) {}

  available(): boolean {
    return this.on;
  }

  describe(): string {
    return 'scripted';
  }

  complete(messages: ModelMessage[], options: CompleteOptions, signal: AbortSignal): Promise<ModelReply> {
    const call = { messages: [...messages], options, signal };
    this.calls.push(call);
    return Promise.resolve(this.script(call, this.calls.length - 1));
  }
}

export const say = (text: string): ModelReply => ({ text, toolCalls: [] });
export const callTool = (name: string, input: unknown, id = `call_${name}_${Math.random().toString(36).slice(2, 8)}`): ModelReply => ({ text: '', toolCalls: [{ id, name, input }] });
