import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EvalConversation } from './dataset';

/**
 * The conversation as an agent's chat history: one Claude Code transcript per session, in the
 * layout Claude Code writes (`<projects>/<slug>/<session>.jsonl`, records linked by
 * `parentUuid`), so chat_history is measured on history imported the way a real one is. The
 * first speaker of the conversation takes the user's side, everyone else the assistant's; the
 * speaker's name stays in front of the words, as in the memory entries.
 *
 * Returns the folder to import and each turn's time → its key: turns are spaced in time, so a
 * chat_history hit (which names its time) leads back to exactly one turn.
 */
export function writeHistoryTranscripts(conv: EvalConversation, root: string): { folder: string; turnAt: Map<number, string> } {
  const folder = path.join(root, 'projects', 'eval-conversation');
  fs.mkdirSync(folder, { recursive: true });
  const first = conv.turns[0]?.speaker;
  const turnAt = new Map<number, string>();
  const sessions = new Map<string, string[]>();
  const lastUuid = new Map<string, string | null>();
  const sessionIds = new Map<string, string>();
  for (const turn of conv.turns) {
    const sessionId = sessionIds.get(turn.session) ?? randomUUID();
    sessionIds.set(turn.session, sessionId);
    const uuid = randomUUID();
    const words = `${turn.speaker}: ${turn.text}`;
    const user = turn.speaker === first;
    const record = {
      parentUuid: lastUuid.get(turn.session) ?? null,
      isSidechain: false,
      type: user ? 'user' : 'assistant',
      message: user ? { role: 'user', content: words } : { role: 'assistant', content: [{ type: 'text', text: words }] },
      uuid,
      sessionId,
      cwd: '/eval/conversation',
      timestamp: new Date(turn.at).toISOString(),
    };
    lastUuid.set(turn.session, uuid);
    const lines = sessions.get(sessionId) ?? [];
    lines.push(JSON.stringify(record));
    sessions.set(sessionId, lines);
    turnAt.set(turn.at, turn.key);
  }
  for (const [id, lines] of sessions) fs.writeFileSync(path.join(folder, `${id}.jsonl`), `${lines.join('\n')}\n`);
  return { folder, turnAt };
}
