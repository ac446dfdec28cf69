import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgetSessionsRedactor } from '../../src/core/history/forgetRedact';
import type { FilesImported, SessionChange, StoredEvent } from '../../src/core/history/historySchema';
import { FileLock } from '../../src/core/store/fileLock';
import { encodeLine, parseOperation, type Operation } from '../../src/core/store/journalLine';
import { purgeJournal } from '../../src/core/store/journalPurge';
import { sealJournal } from '../../src/core/store/journalSeal';
import { PURGED_OP } from '../../src/core/store/journalSegments';
import type { RunsWithheld } from '../../src/core/history/withheldRuns';
import { tempHome } from './helpers/tempStore';

/** A session change whose one event carries `text`. */
function change(id: string, text: string): SessionChange {
  const event: StoredEvent = {
    key: `${id}:1`, seq: 1, runKey: `${id}:1`, kind: 'tool_result', text, blob: null, bytes: text.length, hash: 'h', at: 1, toolName: 't', callId: null,
    toolInput: null, isError: false, parentKey: null, rawType: null, model: null,
  };
  return { session: { id, source: 'codex', externalId: id, file: `/t/${id}.jsonl`, title: null, workspace: null, model: null, startedAt: 1, updatedAt: 1, parentId: null }, upserts: [event], removedKeys: [], runIds: { [`${id}:1`]: `run-${id}` } };
}

/** Words that differ from seed to seed, many of them: a long line. */
function prose(seed: string, words: number): string {
  let x = 0;
  for (const c of seed) x = (x * 31 + c.charCodeAt(0)) >>> 0;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(x.toString(36));
  }
  return `${seed} ${out.join(' ')}`;
}

function lines(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

describe('journal purge', () => {
  it('rewrites live lines in their own bytes: offsets stay, the forgotten text is gone, the rest reads back the same', async () => {
    const home = tempHome('purge');
    const journal = path.join(home, 'journal.jsonl');
    const batch: FilesImported = {
      op: 'history.files.imported', at: 10,
      files: [
        { file: { path: '/t/a.jsonl', size: 1, mtimeMs: 1 }, sessions: [change('ses_a', prose('forgottenwords', 900))] },
        { file: { path: '/t/b.jsonl', size: 1, mtimeMs: 1 }, sessions: [change('ses_b', prose('keptwords', 900))] },
      ],
    };
    const alone: RunsWithheld = { op: 'history.runs.withheld', at: 11, sessionId: 'ses_a', runs: [{ runId: 'run-ses_a', confidence: 0.9 }], model: 'a short forgottenwords line' };
    const other: Operation = { op: 'memory.note.added', at: 12, text: 'unrelated' };
    const written = [encodeLine(batch), encodeLine(alone), encodeLine(other)];
    fs.writeFileSync(journal, written.join('\n') + '\n');
    const size = fs.statSync(journal).size;

    const result = await purgeJournal({ journalPath: journal, sealedDir: path.join(home, 'journal.sealed'), lock: new FileLock(path.join(home, 'journal.lock')), upTo: size, redact: forgetSessionsRedactor(new Set(['ses_a'])) });
    expect(result).toEqual({ segmentLines: 0, segmentsRewritten: 0, liveLines: 2, unpurged: [] });
    expect(fs.statSync(journal).size).toBe(size);
    const after = lines(journal);
    expect(after.map((l) => l.length)).toEqual(written.map((l) => Buffer.byteLength(l)));
    const ops = after.map((l) => parseOperation(l) as Operation);
    expect((ops[0] as FilesImported).files.map((f) => f.sessions.map((s) => s.session.id))).toEqual([[], ['ses_b']]);
    expect((ops[0] as FilesImported).files[1]).toEqual(batch.files[1]);
    expect(ops[1]).toEqual({ op: PURGED_OP, at: 11 });
    expect(ops[2]).toEqual(other);
    expect(after.join('\n')).not.toContain('forgottenwords');
    expect(after.join('\n')).toContain('keptwords');
  });

  it('a seal that read the journal before a purge replaced it does not swap its stale segment in', async () => {
    const home = tempHome('purge-seal');
    const journal = path.join(home, 'journal.jsonl');
    const sealedDir = path.join(home, 'journal.sealed');
    fs.writeFileSync(journal, [encodeLine({ op: 'history.file.imported', at: 1, file: { path: '/t/ses_a.jsonl', size: 1, mtimeMs: 1 }, sessions: [change('ses_a', 'forgottenwords here')] }), encodeLine({ op: 'memory.note.added', at: 2, text: 'x' })].join('\n') + '\n');
    const lock = new FileLock(path.join(home, 'journal.lock'));
    const size = fs.statSync(journal).size;
    let purged: Promise<unknown> | undefined;
    const sealed = await sealJournal({
      journalPath: journal, sealedDir, lock, upTo: size, minBytes: 1,
      onStep: (step) => {
        // Between building the segment and swapping it in, another process purges the live file.
        if (step === 'segment-written') purged = purgeJournal({ journalPath: journal, sealedDir, lock, upTo: size, redact: forgetSessionsRedactor(new Set(['ses_a'])) });
      },
    });
    await purged;
    expect(sealed).toBeUndefined();
    expect(fs.readdirSync(sealedDir).filter((f) => f.endsWith('.br'))).toEqual([]);
    expect(fs.readFileSync(journal, 'utf8')).not.toContain('forgottenwords');
  });
});
