import { chronological, DatasetError, isRecord, type EvalConversation, type EvalDataset, type EvalQuestion, type EvalTurn } from '../dataset';
import { parseLocomoDate } from './dates';
import { TURN_SPACING_MS } from './longMemEval';

export function looksLikeLocomo(data: unknown): boolean {
  const first = Array.isArray(data) ? data[0] : data;
  return isRecord(first) && isRecord(first.conversation) && Array.isArray(first.qa);
}

/**
 * LoCoMo: samples, each one long conversation between two speakers in numbered sessions
 * (`session_N` turns with `dia_id`, dated by `session_N_date_time`) and the questions asked
 * about it (`qa[]`, whose `evidence` lists dia_ids). One sample is one conversation.
 */
export function readLocomo(data: unknown): EvalDataset {
  const samples = Array.isArray(data) ? data : [data];
  const problems: string[] = [];
  return { format: 'locomo', conversations: samples.map((s, i) => readSample(s, i, problems)), problems };
}

function readSample(sample: unknown, index: number, problems: string[]): EvalConversation {
  const where = `LoCoMo sample ${index}`;
  if (!isRecord(sample) || !isRecord(sample.conversation) || !Array.isArray(sample.qa)) throw new DatasetError(`${where}: needs a "conversation" object and a "qa" array`);
  const id = typeof sample.sample_id === 'string' ? sample.sample_id : `sample-${index}`;
  const conv = sample.conversation;
  const sessionNumbers = Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  if (!sessionNumbers.length) throw new DatasetError(`${where} (${id}): the conversation has no session_N arrays`);
  const turns: EvalTurn[] = [];
  let lastKnown = 0;
  for (const n of sessionNumbers) {
    const session = conv[`session_${n}`];
    if (!Array.isArray(session)) throw new DatasetError(`${where} (${id}): session_${n} is not an array of turns`);
    const dateText = conv[`session_${n}_date_time`];
    const parsed = typeof dateText === 'string' ? parseLocomoDate(dateText) : undefined;
    if (parsed === undefined) problems.push(`${id}: session_${n} has no readable date (${JSON.stringify(dateText)}); it was placed after the previous one`);
    const start = parsed ?? lastKnown + 3_600_000;
    lastKnown = start;
    session.forEach((turn, t) => turns.push(readTurn(turn, `${where} (${id}) session_${n} turn ${t}`, start + t * TURN_SPACING_MS, `session_${n}`)));
  }
  const keys = new Set(turns.map((t) => t.key));
  if (keys.size !== turns.length) throw new DatasetError(`${where} (${id}): two turns share a dia_id`);
  const ordered = chronological(turns);
  const askedAt = (ordered[ordered.length - 1]?.at ?? 0) + TURN_SPACING_MS;
  const questions = sample.qa.map((qa, q) => readQuestion(qa, `${id}#q${q}`, keys, askedAt, problems));
  return { id, turns: ordered, questions };
}

function readTurn(turn: unknown, where: string, at: number, session: string): EvalTurn {
  if (!isRecord(turn) || typeof turn.speaker !== 'string' || typeof turn.dia_id !== 'string' || typeof turn.text !== 'string') {
    throw new DatasetError(`${where}: a turn needs string "speaker", "dia_id" and "text"`);
  }
  // A shared photo is part of what was said: its caption is kept with the words.
  const caption = typeof turn.blip_caption === 'string' && turn.blip_caption.trim() ? ` [shared a photo: ${turn.blip_caption.trim()}]` : '';
  return { key: turn.dia_id, speaker: turn.speaker, text: turn.text + caption, at, session };
}

function readQuestion(qa: unknown, id: string, keys: Set<string>, askedAt: number, problems: string[]): EvalQuestion {
  if (!isRecord(qa) || typeof qa.question !== 'string') throw new DatasetError(`LoCoMo ${id}: a qa item needs a string "question"`);
  const evidence: string[] = [];
  // The published file sometimes packs several ids into one string ("D8:6; D9:17").
  for (const item of Array.isArray(qa.evidence) ? qa.evidence : []) {
    for (const ref of String(item).split(/[;,\s]+/).filter(Boolean)) {
      if (keys.has(ref)) {
        if (!evidence.includes(ref)) evidence.push(ref);
      } else problems.push(`${id}: evidence "${ref}" names no turn`);
    }
  }
  const type = typeof qa.category === 'number' || typeof qa.category === 'string' ? `category ${String(qa.category)}` : undefined;
  return { id, question: qa.question, type, askedAt, evidence };
}
