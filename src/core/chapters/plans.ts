import type { ChapterEvent } from './sessionEvents';

/**
 * What counts as a plan: a call to an agent's own planning tool, whose input is the whole plan
 * each time (so every call is a snapshot of it), paired with the tool's answer:
 * - Claude Code `TodoWrite` {todos: [{content, status}]} and `ExitPlanMode` {plan: markdown};
 * - Codex `update_plan` {explanation?, plan: [{step, status}]};
 * - VS Code Copilot `manage_todo_list` {todoList: [{title, status}]} (operation "read" is no plan);
 * - other agents' `todo_write`/`write_todos`/`todowrite` with the same item shapes.
 */
const PLAN_TOOL = /^(todowrite|todo_write|write_todos|update_plan|manage_todo_list|exitplanmode|exit_plan_mode)$/i;

export interface DetectedPlan {
  seq: number;
  toolName: string;
  title: string;
  /** completed | in_progress | pending for step lists; proposed | approved | rejected for a prose plan. */
  status: string;
  resultSeq: number | null;
  bytes: number;
  estimatedTokens: number;
  /** One line per step, "[x] done", "[>] in progress", "[ ] pending"; a prose plan's headings and first lines. */
  outline: string[];
  /** What the tool answered: accepted, approved, rejected, failed, or "no answer yet". */
  verdict: string;
}

interface Step {
  text: string;
  state: 'done' | 'doing' | 'todo';
}

export function isPlanTool(name: string | null): boolean {
  return !!name && PLAN_TOOL.test(name);
}

/** Every plan call in `events`, in seq order, with its result when one exists. */
export function detectPlans(events: readonly ChapterEvent[], text: (e: ChapterEvent) => string, tokens: (e: ChapterEvent) => number): DetectedPlan[] {
  const results = new Map<string, ChapterEvent>();
  for (const e of events) if (e.kind === 'tool_result' && e.callId) results.set(e.callId, e);
  const plans: DetectedPlan[] = [];
  for (const call of events) {
    if (call.kind !== 'tool_call' || !isPlanTool(call.toolName)) continue;
    const input = parseInput(call.toolInput ?? text(call));
    const result = call.callId ? results.get(call.callId) : undefined;
    const prose = /exit_?plan_?mode/i.test(call.toolName ?? '');
    const plan = prose ? prosePlan(input) : stepPlan(input);
    if (!plan) continue;
    const verdict = verdictOf(result, result ? text(result) : '', prose);
    plans.push({
      seq: call.seq,
      toolName: call.toolName ?? '',
      title: plan.title,
      status: prose ? (verdict === 'approved' || verdict === 'rejected' ? verdict : 'proposed') : plan.status,
      resultSeq: result?.seq ?? null,
      bytes: call.bytes + (result?.bytes ?? 0),
      estimatedTokens: tokens(call) + (result ? tokens(result) : 0),
      outline: plan.outline,
      verdict,
    });
  }
  return plans;
}

function stepPlan(input: unknown): { title: string; status: string; outline: string[] } | undefined {
  if (!isObject(input)) return undefined;
  if (typeof input.operation === 'string' && input.operation !== 'write') return undefined;
  const list = [input.todos, input.plan, input.todoList, input.items].find(Array.isArray) as unknown[] | undefined;
  if (!list) return undefined;
  const steps = list.flatMap((item): Step[] => {
    if (!isObject(item)) return typeof item === 'string' ? [{ text: item, state: 'todo' }] : [];
    const body = [item.content, item.step, item.title, item.text, item.description].find((v) => typeof v === 'string');
    if (typeof body !== 'string') return [];
    return [{ text: body, state: stateOf(item.status) }];
  });
  if (!steps.length) return undefined;
  const done = steps.filter((s) => s.state === 'done').length;
  const doing = steps.find((s) => s.state === 'doing');
  const status = done === steps.length ? 'completed' : doing || done > 0 ? 'in_progress' : 'pending';
  const explanation = typeof input.explanation === 'string' && input.explanation.trim() ? firstLine(input.explanation) : undefined;
  const focus = explanation ?? doing?.text ?? steps.find((s) => s.state === 'todo')?.text ?? (steps[0] as Step).text;
  return {
    title: `${steps.length}-step plan (${done}/${steps.length} done): ${clip(firstLine(focus), 90)}`,
    status,
    outline: steps.map((s) => `${s.state === 'done' ? '[x]' : s.state === 'doing' ? '[>]' : '[ ]'} ${clip(firstLine(s.text), 160)}`),
  };
}

function prosePlan(input: unknown): { title: string; status: string; outline: string[] } | undefined {
  const text = isObject(input) && typeof input.plan === 'string' ? input.plan : typeof input === 'string' ? input : undefined;
  if (!text?.trim()) return undefined;
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const heading = lines.find((l) => /^#{1,6}\s/.test(l))?.replace(/^#+\s*/, '');
  const outline = lines.filter((l) => /^(#{1,6}\s|[-*]\s|\d+[.)]\s)/.test(l)).slice(0, 20).map((l) => clip(l, 160));
  return { title: clip(heading ?? lines[0] ?? 'Plan', 100), status: 'proposed', outline: outline.length ? outline : lines.slice(0, 5).map((l) => clip(l, 160)) };
}

function verdictOf(result: ChapterEvent | undefined, text: string, prose: boolean): string {
  if (!result) return 'no answer yet';
  if (prose) {
    if (result.isError || /reject|not approved|denied|declined|doesn't want|does not want/i.test(text)) return 'rejected';
    if (/approved|accepted|proceed/i.test(text)) return 'approved';
    return clip(firstLine(text), 80) || 'answered';
  }
  return result.isError ? `failed: ${clip(firstLine(text), 80)}` : 'accepted';
}

function stateOf(status: unknown): Step['state'] {
  const s = typeof status === 'string' ? status.toLowerCase().replace(/[\s-]/g, '_') : '';
  if (s === 'completed' || s === 'done' || s === 'complete') return 'done';
  if (s === 'in_progress' || s === 'active' || s === 'doing') return 'doing';
  return 'todo';
}

function parseInput(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    // Some sources prefix the tool name to its JSON arguments ("update_plan {...}").
    const brace = raw.indexOf('{');
    if (brace > 0) {
      try {
        return JSON.parse(raw.slice(brace)) as unknown;
      } catch {
        return raw;
      }
    }
    return raw;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function firstLine(s: string): string {
  return (s.split('\n').find((l) => l.trim()) ?? '').trim();
}

export function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
