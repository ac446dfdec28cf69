import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { STATEMENT_MAX } from '../../core/memory/memoryService';
import { openServices, type Services } from '../../core/services';
import { invokeTool } from '../../core/tools/invoke';
import { findTool } from '../../core/tools/registry';
import type { ToolDefinition } from '../../core/tools/toolDefinition';
import { bundledModel } from '../../core/memory/semantic/localModel';
import type { EvalConversation, EvalTurn } from './dataset';
import { writeHistoryTranscripts } from './historyTranscripts';

/** The connection name the eval's calls carry, so its writes and reads are recognisable in the store. */
export const EVAL_CLIENT = 'recollect-eval';

export function registryTool(name: string): ToolDefinition {
  const tool = findTool(name);
  if (!tool) throw new Error(`the tool registry has no "${name}"`);
  return tool;
}

/** What an agent's memory of one conversation holds: a fresh store, and which entry came from which turn. */
export interface LoadedConversation {
  services: Services;
  /** The store's clock: set to each turn's time while loading, and to the question's time while asking. */
  clock: { now: number };
  /** entry id → turn key. */
  entryTurn: Map<string, string>;
  /** The text stored for each turn (what the BM25 baseline indexes too). */
  turnText: Map<string, string>;
  /** The same turns imported as chat history: each turn's time (epoch ms) → its key. */
  historyTurnAt: Map<number, string>;
  entries: number;
  refusedTurns: { key: string; reason: string }[];
  /** Milliseconds each turn took to write, for the report. */
  writeMs: number[];
  close(): void;
}

/**
 * Loads a conversation the way an agent keeps one, twice: as memory and as chat history.
 * As memory, every turn goes through `remember_note`
 * (the tool, by the registry, as MCP calls it) into the day log of the day it was said, with
 * the speaker in front of the words. Day-log entries rather than one Markdown note per
 * session because an entry is what an agent writes as the talk goes on, it is what
 * get_context and search_text return one by one, and it keeps each turn traceable to its
 * own id. The store's clock is the turn's time while it is written, so each entry is
 * recorded when it was said and recency ranks it as it would have in real use. As chat
 * history, the sessions are Claude Code transcripts imported by the importer (historyTranscripts.ts).
 */
export async function loadConversation(conv: EvalConversation, wasmPath: string, modelDistDir: string): Promise<LoadedConversation> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-eval-'));
  const clock = { now: conv.turns[0]?.at ?? 0 };
  let services: Services;
  try {
    // The bundled model, as a new user has it; every turn is embedded before the first question.
    services = await openServices({ home, wasmPath, now: () => clock.now }, { embeddings: bundledModel(modelDistDir) });
    // Semantic systems measured without their model would read as a recall of 0: refuse instead.
    if (!services.semantic.configured) {
      const reason = services.semantic.state().reason ?? 'unknown reason';
      services.store.close();
      throw new Error(`the bundled embedding model cannot run: ${reason}`);
    }
  } catch (err) {
    fs.rmSync(home, { recursive: true, force: true });
    throw err;
  }
  const loaded: LoadedConversation = {
    services,
    clock,
    entryTurn: new Map(),
    turnText: new Map(),
    historyTurnAt: new Map(),
    entries: 0,
    refusedTurns: [],
    writeMs: [],
    close() {
      services.store.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
  try {
    const rememberNote = registryTool('remember_note');
    for (const turn of conv.turns) await writeTurn(loaded, rememberNote, turn);
    const { folder, turnAt } = writeHistoryTranscripts(conv, path.join(home, 'transcripts'));
    const report = await services.importer.importPaths([folder]);
    if (report.problems.length) throw new Error(`the conversation's transcripts did not import: ${report.problems[0]?.reason ?? ''}`);
    loaded.historyTurnAt = turnAt;
    await services.semantic.indexAll();
  } catch (err) {
    loaded.close();
    throw err;
  }
  return loaded;
}

async function writeTurn(loaded: LoadedConversation, rememberNote: ToolDefinition, turn: EvalTurn): Promise<void> {
  const text = `${turn.speaker}: ${turn.text}`;
  loaded.turnText.set(turn.key, text);
  loaded.clock.now = turn.at;
  const started = performance.now();
  for (const part of parts(text, STATEMENT_MAX)) {
    const input = { text: part, date: new Date(turn.at).toISOString().slice(0, 10), timezone: 'UTC' };
    const result = (await invokeTool(rememberNote, input, loaded.services, { client: EVAL_CLIENT })) as { ok?: boolean; id?: unknown; reason?: unknown };
    if (result.ok !== true || typeof result.id !== 'string') {
      // A refused turn stays in the evidence: recall counts it as missed, the report says why.
      loaded.refusedTurns.push({ key: turn.key, reason: String(result.reason ?? 'no id returned') });
      return;
    }
    loaded.entryTurn.set(result.id, turn.key);
    loaded.entries++;
  }
  loaded.writeMs.push(performance.now() - started);
}

/**
 * A turn longer than one entry may hold is kept as consecutive entries, never cut: the limit
 * refuses rather than truncates, so the eval splits where a person pasting it would.
 */
export function parts(text: string, max: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = max;
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut--; // never split a surrogate pair
    const space = rest.lastIndexOf(' ', cut);
    if (space > max / 2) cut = space + 1;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  out.push(rest);
  return out;
}
