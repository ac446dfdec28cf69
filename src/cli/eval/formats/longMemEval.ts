import { chronological, DatasetError, isRecord, type EvalConversation, type EvalDataset, type EvalTurn } from '../dataset';
import { parseLongMemEvalDate } from './dates';

/** Turns of a session are this far apart: the file dates only the session, and the order must survive. */
export const TURN_SPACING_MS = 60_000;

export function looksLikeLongMemEval(data: unknown): boolean {
  return Array.isArray(data) && isRecord(data[0]) && Array.isArray(data[0].haystack_sessions);
}

/**
 * LongMemEval: an array of questions, each with its own haystack of sessions. Each question
 * is therefore its own conversation (its own fresh store). The evidence is the turns marked
 * `has_answer`; `answer_session_ids` names whole sessions and is not used, because recall
 * here is measured per turn.
 */
export function readLongMemEval(data: unknown): EvalDataset {
  if (!Array.isArray(data)) throw new DatasetError('LongMemEval: the file is not a JSON array of questions');
  const problems: string[] = [];
  const conversations = data.map((item, i) => readQuestion(item, i, problems));
  return { format: 'longmemeval', conversations, problems };
}

function readQuestion(item: unknown, index: number, problems: string[]): EvalConversation {
  const where = `LongMemEval item ${index}`;
  if (!isRecord(item)) throw new DatasetError(`${where} is not an object`);
  const id = text(item.question_id, `${where}: question_id`);
  const question = text(item.question, `${where} (${id}): question`);
  const sessions = item.haystack_sessions;
  const ids = item.haystack_session_ids;
  const dates = item.haystack_dates;
  if (!Array.isArray(sessions) || !Array.isArray(ids) || !Array.isArray(dates) || ids.length !== sessions.length || dates.length !== sessions.length) {
    throw new DatasetError(`${where} (${id}): haystack_sessions, haystack_session_ids and haystack_dates must be arrays of the same length`);
  }
  const turns: EvalTurn[] = [];
  const evidence: string[] = [];
  let lastKnown = 0;
  sessions.forEach((session, s) => {
    const sessionId = text(ids[s], `${where} (${id}): haystack_session_ids[${s}]`);
    const parsed = typeof dates[s] === 'string' ? parseLongMemEvalDate(dates[s]) : undefined;
    if (parsed === undefined) problems.push(`${id}: session ${sessionId} has no readable date (${JSON.stringify(dates[s])}); it was placed after the previous one`);
    const start = parsed ?? lastKnown + 3_600_000;
    lastKnown = start;
    if (!Array.isArray(session)) throw new DatasetError(`${where} (${id}): haystack_sessions[${s}] is not an array of turns`);
    session.forEach((turn, t) => {
      if (!isRecord(turn)) throw new DatasetError(`${where} (${id}): session ${sessionId} turn ${t} is not an object`);
      const key = `${sessionId}#${t}`;
      turns.push({ key, speaker: text(turn.role, `${where} (${id}): ${key} role`), text: text(turn.content, `${where} (${id}): ${key} content`), at: start + t * TURN_SPACING_MS, session: sessionId });
      if (turn.has_answer === true) evidence.push(key);
    });
  });
  const ordered = chronological(turns);
  const last = ordered[ordered.length - 1]?.at ?? 0;
  const asked = typeof item.question_date === 'string' ? parseLongMemEvalDate(item.question_date) : undefined;
  if (asked === undefined) problems.push(`${id}: question_date is not readable; the question is asked after the last turn`);
  // Some items date the question before their last session; asking "from the past" would
  // make those turns newer than now, so the question waits until every turn was said.
  const askedAt = Math.max(asked ?? 0, last + TURN_SPACING_MS);
  const type = typeof item.question_type === 'string' ? item.question_type : undefined;
  return { id, turns: ordered, questions: [{ id, question, type, askedAt, evidence }] };
}

function text(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new DatasetError(`${what} is not a string`);
  return v;
}
