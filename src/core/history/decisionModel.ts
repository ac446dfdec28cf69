import type { LanguageModelPort } from '../lcm/languageModel';

/**
 * A model that answers one narrow question with a short structured reply (today: is this past
 * run related to what the person asks now?). Core sees only this; the extension host backs it
 * with a VS Code language model behind its own setting and consent, and the CLI, the MCP
 * server and most tests have none, so every caller must work without it.
 */
export interface DecisionModel {
  /** Cheap and synchronous: why it cannot be used now (setting off, consent declined, no API), or undefined when it can. */
  unavailable(): string | undefined;
  /** Names the model for the answer ("which judged it"). */
  describe(): string;
  /** The model's raw text for one prompt. Throws ModelUnavailableError when the person declines at the consent prompt. */
  decide(prompt: string, signal: AbortSignal): Promise<string>;
}

/** A decision model over the general language-model port: one user message in, its text out, no tools offered. */
export function decisionModelOver(port: LanguageModelPort, whyUnavailable: () => string, justification?: string): DecisionModel {
  return {
    unavailable: () => (port.available() ? undefined : whyUnavailable()),
    describe: () => port.describe(),
    async decide(prompt, signal) {
      const reply = await port.complete([{ role: 'user', content: prompt }], { maxOutputTokens: 800, ...(justification ? { justification } : {}) }, signal);
      return reply.text;
    },
  };
}
