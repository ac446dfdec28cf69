import type { LanguageModelPort, ModelMessage, ModelReply, ModelToolSpec } from './languageModel';

/** The only tool the sub-agent is offered; any other name it calls is answered with an error and never run. */
export const SUB_AGENT_TOOL = 'lcm_expand';

export interface AgentSeed {
  /** A summary id, or "msg <id>" for a message found directly (a conversation without summaries there). */
  id: string;
  heading: string;
  content: string;
}

export interface AgentTask {
  prompt: string;
  query?: string | undefined;
  conversationLabel: string;
  seeds: AgentSeed[];
  maxAnswerTokens: number;
  maxTurns: number;
  tool: ModelToolSpec;
}

export type StopReason = 'answered' | 'timeout' | 'token_cap' | 'turns' | 'error';

export interface AgentOutcome {
  answer: string;
  stoppedBy: StopReason;
  /** Summary ids the sub-agent expanded or was shown as a child. */
  expandedIds: string[];
  sourceTokens: number;
  toolCalls: number;
  refusedCalls: { name: string; reason: string }[];
  error?: string;
}

/** What running lcm_expand returned to the loop, already under the grant. */
export interface ExpandCallResult {
  result: object;
  citedIds: string[];
  tokens: number;
  budgetSpent: boolean;
}

const SYSTEM = (task: AgentTask) =>
  `You answer one question from a person's archived chat history (${task.conversationLabel}). You are given summaries from a summary DAG; ` +
  `summaries are lossy, and each ends with "Expand for details about:" naming what it left out. Call ${SUB_AGENT_TOOL} with summary ids to read one ` +
  `level down (a condensed summary's children, or a leaf's source messages verbatim); walk down until you have the exact detail the question needs. ` +
  `${SUB_AGENT_TOOL} is the only tool you have. Then answer in at most ${task.maxAnswerTokens} tokens, citing the ids (sum_…, msg …) you relied on in [brackets]. ` +
  'If the history does not contain the answer, say so plainly.';

/**
 * The bounded sub-agent behind lcm_expand_query. It stops when the model answers, when the
 * abort signal fires (the caller's timeout), when the grant's token budget is spent (then it
 * asks once more for an answer without tools), or after maxTurns.
 */
export async function runExpandAgent(model: LanguageModelPort, task: AgentTask, expand: (input: unknown) => Promise<ExpandCallResult>, signal: AbortSignal): Promise<AgentOutcome> {
  const outcome: AgentOutcome = { answer: '', stoppedBy: 'answered', expandedIds: [], sourceTokens: 0, toolCalls: 0, refusedCalls: [] };
  const seeds = task.seeds.map((s) => `### ${s.id} — ${s.heading}\n${s.content}`).join('\n\n');
  const messages: ModelMessage[] = [
    { role: 'system', content: SYSTEM(task) },
    { role: 'user', content: `Question: ${task.prompt}${task.query ? `\n(found by searching for: ${task.query})` : ''}\n\nStarting points:\n\n${seeds || '(none matched)'}` },
  ];
  const expanded = new Set<string>();
  try {
    for (let turn = 0; turn < task.maxTurns; turn++) {
      const reply = await untilAborted(model.complete(messages, { tools: [task.tool], maxOutputTokens: task.maxAnswerTokens * 2 }, signal), signal);
      if (!reply.toolCalls.length) {
        outcome.answer = reply.text.trim();
        return finish(outcome, expanded, 'answered');
      }
      messages.push({ role: 'assistant', content: reply.text, toolCalls: reply.toolCalls });
      let spent = false;
      for (const call of reply.toolCalls) {
        outcome.toolCalls++;
        let content: object;
        if (call.name !== SUB_AGENT_TOOL) {
          const reason = `only ${SUB_AGENT_TOOL} is available to this sub-agent; "${call.name}" was not run`;
          outcome.refusedCalls.push({ name: call.name, reason });
          content = { ok: false, reason };
        } else {
          const r = await expand(call.input);
          content = r.result;
          outcome.sourceTokens += r.tokens;
          for (const id of r.citedIds) expanded.add(id);
          spent ||= r.budgetSpent;
        }
        messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify(content) });
      }
      if (spent) return finish(outcome, expanded, 'token_cap', await finalAnswer(model, messages, task, signal, 'The expansion budget is spent.'));
    }
    return finish(outcome, expanded, 'turns', await finalAnswer(model, messages, task, signal, `That was the last of ${task.maxTurns} turns.`));
  } catch (err) {
    if (signal.aborted) return finish(outcome, expanded, 'timeout');
    outcome.error = (err as Error).message;
    return finish(outcome, expanded, 'error');
  }
}

async function finalAnswer(model: LanguageModelPort, messages: ModelMessage[], task: AgentTask, signal: AbortSignal, why: string): Promise<string> {
  const reply = await untilAborted(
    model.complete([...messages, { role: 'user', content: `${why} Answer now from what you have read, citing the ids, without calling tools.` }], { tools: [], maxOutputTokens: task.maxAnswerTokens * 2 }, signal),
    signal,
  );
  return reply.text.trim();
}

function finish(outcome: AgentOutcome, expanded: Set<string>, stoppedBy: StopReason, answer?: string): AgentOutcome {
  outcome.stoppedBy = stoppedBy;
  if (answer !== undefined) outcome.answer = answer;
  outcome.expandedIds = [...expanded];
  return outcome;
}

/** A model that ignores the signal must still not hold the loop past its deadline. */
function untilAborted(p: Promise<ModelReply>, signal: AbortSignal): Promise<ModelReply> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
