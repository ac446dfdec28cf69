import * as fs from 'node:fs';
import { DatasetError, type EvalDataset } from '../dataset';
import { looksLikeLocomo, readLocomo } from './locomo';
import { looksLikeLongMemEval, readLongMemEval } from './longMemEval';

/** Reads a benchmark file and tells its format from its shape; anything else is a DatasetError naming what was expected. */
export function readDatasetFile(file: string): EvalDataset {
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new DatasetError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch (err) {
    throw new DatasetError(`${file} is not JSON: ${(err as Error).message}`);
  }
  return readDataset(data, file);
}

export function readDataset(data: unknown, file = 'input'): EvalDataset {
  if (looksLikeLongMemEval(data)) return readLongMemEval(data);
  if (looksLikeLocomo(data)) return readLocomo(data);
  throw new DatasetError(
    `${file}: unknown format. Expected LongMemEval (an array of questions with haystack_sessions, haystack_session_ids, haystack_dates) ` +
      'or LoCoMo (samples with a "conversation" of session_N turns and a "qa" array).',
  );
}
