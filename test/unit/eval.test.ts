import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Bm25Baseline } from '../../src/cli/eval/bm25Baseline';
import { parts } from '../../src/cli/eval/conversationStore';
import { readDataset, readDatasetFile } from '../../src/cli/eval/formats/detect';
import { parseLocomoDate, parseLongMemEvalDate } from '../../src/cli/eval/formats/dates';
import { recallAt } from '../../src/cli/eval/recall';
import { runDataset } from '../../src/cli/eval/runner';
import { CLI } from './helpers/mcpClient';
import { tempHome, WASM_PATH } from './helpers/tempStore';

const LONGMEMEVAL_SAMPLE = '/work/shared/fixtures/bench/longmemeval_sample_2items.json';
const LOCOMO_TINY = path.join(__dirname, 'fixtures/locomo_tiny.json');
/** The build's bundles, where the bundled embedding model is (the suite builds before it runs). */
const DIST = path.join(__dirname, '../../dist');

function evalCli(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'eval', ...args], { env: { ...process.env, RECOLLECT_HOME: tempHome('eval-cli') }, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A LongMemEval-shaped haystack where every turn holds "zebra" once and the answer is the longest: BM25's length norm ranks it 8th of 8. */
function zebraDataset(): unknown {
  const session = Array.from({ length: 12 }, (_, i) => {
    const filler = Array.from({ length: i < 8 ? 3 + i * 4 : 5 }, (_, j) => `f${i}w${j}`).join(' ');
    return { role: i % 2 ? 'assistant' : 'user', content: i < 8 ? `zebra ${filler}` : filler, ...(i === 7 ? { has_answer: true } : {}) };
  });
  return [
    {
      question_id: 'z1',
      question_type: 'single-session-user',
      question: 'zebra',
      question_date: '2024/01/02 (Tue) 09:00',
      haystack_session_ids: ['s1'],
      haystack_dates: ['2024/01/01 (Mon) 10:00'],
      haystack_sessions: [session],
    },
  ];
}

describe('eval: reading the benchmark formats', () => {
  it('reads the LongMemEval sample: one conversation per question, evidence = the has_answer turns', () => {
    const d = readDatasetFile(LONGMEMEVAL_SAMPLE);
    expect(d.format).toBe('longmemeval');
    expect(d.conversations.map((c) => c.turns.length)).toEqual([24, 24]);
    const [first, second] = d.conversations.map((c) => c.questions[0]);
    expect(first).toMatchObject({ id: '6a1eabeb', type: 'knowledge-update', evidence: ['answer_a25d4a91_1#4', 'answer_a25d4a91_2#0'] });
    expect(second).toMatchObject({ id: 'gpt4_70e84552_abs', type: 'temporal-reasoning', evidence: ['answer_b3070ec4_abs_1#0'] });
    // Its question is dated before its last session: it is asked once every turn was said.
    const last = d.conversations[1]?.turns.at(-1)?.at ?? Infinity;
    expect(second?.askedAt).toBeGreaterThan(last);
    expect(d.conversations[0]?.turns[0]).toMatchObject({ speaker: 'user', at: Date.UTC(2023, 4, 25, 20, 21) });
  });

  it('reads LoCoMo: dia_id keys, session dates, packed evidence split, unknown evidence reported, photo captions kept', () => {
    const d = readDatasetFile(LOCOMO_TINY);
    expect(d.format).toBe('locomo');
    const conv = d.conversations[0];
    expect(conv?.turns.map((t) => t.key)).toEqual(['D1:1', 'D1:2', 'D1:3', 'D2:1', 'D2:2', 'D2:3', 'D3:1', 'D3:2', 'D3:3']);
    expect(conv?.turns[0]?.at).toBe(Date.UTC(2023, 4, 8, 13, 56));
    expect(conv?.turns[4]?.text).toBe('That instrument sounds eerie. [shared a photo: a wooden box with an antenna]');
    expect(conv?.questions[1]).toMatchObject({ type: 'category 1', evidence: ['D2:1', 'D2:3'] });
    expect(conv?.questions[3]?.evidence).toEqual([]);
    expect(d.problems).toEqual(['tiny-1#q3: evidence "D9:9" names no turn']);
  });

  it('refuses what is neither format, naming both', () => {
    expect(() => readDataset({ hello: 1 })).toThrow(/unknown format.*LongMemEval.*LoCoMo/);
    expect(() => readDataset([{ question_id: 'x', question: 'q', haystack_sessions: [[]], haystack_session_ids: [], haystack_dates: [] }])).toThrow(/same length/);
  });

  it('reads the dates as written, and refuses impossible ones', () => {
    expect(parseLongMemEvalDate('2023/05/30 (Tue) 08:29')).toBe(Date.UTC(2023, 4, 30, 8, 29));
    expect(parseLocomoDate('12:05 am on 1 Jan, 2024')).toBe(Date.UTC(2024, 0, 1, 0, 5));
    expect(parseLocomoDate('1:00 pm on 31 February, 2024')).toBeUndefined();
    expect(parseLongMemEvalDate('yesterday')).toBeUndefined();
  });
});

describe('eval: the measures', () => {
  it('recall@k counts evidence turns within the first k items', () => {
    const ranked = ['a', undefined, 'b', 'c', 'd', 'e', 'x'];
    expect(recallAt(ranked, ['x'], 5)).toBe(0);
    expect(recallAt(ranked, ['x'], 10)).toBe(1);
    expect(recallAt(ranked, ['a', 'x', 'missing', 'd'], 5)).toBe(0.5);
  });

  it('the BM25 baseline ranks rarer and more matches first, and nothing for no shared word', () => {
    const b = new Bm25Baseline();
    b.add('t1', 'the cat sat');
    b.add('t2', 'the dog sat on the Café mat');
    b.add('t3', 'a bird');
    expect(b.rank('dog cafe', 10)).toEqual(['t2']);
    expect(b.rank('the cat', 10)).toEqual(['t1', 't2']);
    expect(b.rank('zebra', 10)).toEqual([]);
  });

  it('a turn longer than one entry is split at a space, never cut', () => {
    const text = `${'word '.repeat(1000)}end`;
    const pieces = parts(text, 4000);
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((p) => p.length <= 4000)).toBe(true);
    expect(pieces[0]?.endsWith(' ')).toBe(true);
  });
});

describe('eval: recall through the real tools on hand-made data', () => {
  it('LoCoMo-shaped: exact recall for every system', async () => {
    const r = await runDataset(readDatasetFile(LOCOMO_TINY), { wasmPath: WASM_PATH, modelDistDir: DIST, maxTokens: 4000 });
    expect(r).toMatchObject({ questions: 4, questions_evaluated: 3, skipped_no_evidence: 1, turns: 9, entries_written: 9, turns_refused: 0 });
    // q0: "greyhound" is only in D1:1 (verbatim search_text needs "who" too: a partial match finds it).
    // q1: D2:3 says "rehearses", not "rehearse", and shares no other word: the index stems both to one
    // term, so only the unstemmed BM25 baseline misses half the evidence.
    // q2: "teal kitchen" is in D3:1 word for word (D3:2 says "kitchens", the same term).
    expect(r.recall).toEqual({
      get_context: { questions: 3, 'recall@5': 1, 'recall@10': 1 },
      search_text: { questions: 3, 'recall@5': 1, 'recall@10': 1 },
      search_text_keywords: { questions: 3, 'recall@5': 1, 'recall@10': 1 },
      bm25: { questions: 3, 'recall@5': 0.8333, 'recall@10': 0.8333 },
      // The same turns as chat history (fused search, and by meaning alone) and search_memory find
      // each evidence turn among their first five.
      chat_history: { questions: 3, 'recall@5': 1, 'recall@10': 1 },
      chat_history_semantic: { questions: 3, 'recall@5': 1, 'recall@10': 1 },
      search_memory: { questions: 3, 'recall@5': 1, 'recall@10': 1 },
    });
    expect(r.by_type?.['category 1']?.get_context).toEqual({ questions: 1, 'recall@5': 1, 'recall@10': 1 });
    expect(r.by_type?.['category 4']?.search_text).toEqual({ questions: 2, 'recall@5': 1, 'recall@10': 1 });
  });

  it('LongMemEval-shaped: the answer ranked 8th is missed at 5 and found at 10 by every system', async () => {
    const r = await runDataset(readDataset(zebraDataset()), { wasmPath: WASM_PATH, modelDistDir: DIST, maxTokens: 4000 });
    for (const system of ['get_context', 'search_text', 'search_text_keywords', 'bm25'] as const) {
      expect(r.recall[system], system).toEqual({ questions: 1, 'recall@5': 0, 'recall@10': 1 });
    }
    expect(r.mean_items.bm25).toBe(8);
  });
});

describe('eval: the command, as a real process (dist/cli.js)', () => {
  it('measures the LongMemEval sample and the LoCoMo fixture: JSON on stdout, numbers in [0,1], summary on stderr', () => {
    const r = evalCli(LONGMEMEVAL_SAMPLE, LOCOMO_TINY);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { definition: string; files: { ok: boolean; format: string; questions_evaluated: number; recall: Record<string, Record<string, number>> }[] };
    expect(out.definition).toMatch(/recall@k/);
    expect(out.files.map((f) => [f.ok, f.format])).toEqual([
      [true, 'longmemeval'],
      [true, 'locomo'],
    ]);
    expect(out.files[0]?.questions_evaluated).toBe(2);
    for (const f of out.files) {
      expect(Object.keys(f.recall)).toEqual(['get_context', 'search_text', 'search_text_keywords', 'chat_history', 'chat_history_semantic', 'search_memory', 'bm25']);
      for (const figures of Object.values(f.recall)) {
        for (const k of ['recall@5', 'recall@10']) {
          expect(figures[k]).toBeGreaterThanOrEqual(0);
          expect(figures[k]).toBeLessThanOrEqual(1);
        }
      }
    }
    expect(r.err).toMatch(/get_context\s+\d+\.\d%/);
  });

  it('no file is a usage error (2); an unreadable or unknown file says why and exits 1', () => {
    expect(evalCli().code).toBe(2);
    expect(evalCli('--max-tokens', '50', LOCOMO_TINY).code).toBe(2);
    const dir = tempHome('eval-bad');
    const unknown = path.join(dir, 'other.json');
    fs.writeFileSync(unknown, '{"hello": 1}');
    const r = evalCli(unknown, path.join(dir, 'missing.json'));
    expect(r.code).toBe(1);
    const files = (JSON.parse(r.out) as { files: { ok: boolean; error: string }[] }).files;
    expect(files.map((f) => f.ok)).toEqual([false, false]);
    expect(files[0]?.error).toMatch(/unknown format/);
    expect(files[1]?.error).toMatch(/cannot read/);
    expect(r.err).toMatch(/unknown format/);
  });
});
