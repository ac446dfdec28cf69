import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { openTemp, tempHome } from './helpers/tempStore';
import { callTool as call } from './helpers/memoryCall';

const T0 = Date.parse('2026-11-01T10:00:00Z');

function journalLines(home: string): Record<string, unknown>[] {
  return fs
    .readFileSync(path.join(home, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The memory's own lines. */
function memoryLines(home: string): Record<string, unknown>[] {
  return journalLines(home).filter((l) => String(l.op).startsWith('memory.'));
}

/** Every row recall reads for facts and entries, with the search index, in a fixed order. */
function picture(s: Services) {
  const db = s.store.db;
  return {
    facts: queryRows(db, 'SELECT id, subject, predicate, object, scope, source, statement, cites, recorded_at, superseded_at, superseded_by, valid_from, valid_to FROM facts ORDER BY id'),
    notes: queryRows(db, 'SELECT id, path, day, text, scope, source, timezone, cites, fact_id, created_at FROM notes ORDER BY id'),
    fts: queryRows(db, 'SELECT body, created_at, scope, ref FROM memory_fts ORDER BY ref'),
  };
}

describe('remember with a fact: one journal line', () => {
  it('journals a fact and its sentence as one operation (one append, one fsync), and both are recalled', async () => {
    const home = tempHome('remember-one');
    let clock = T0;
    const s = await openTemp(home, () => clock);
    await call(s, 'remember', { statement: 'a note to start the day' });
    const before = memoryLines(home).length;
    const saved = await call(s, 'remember', { statement: 'We deploy with Argo', subject: 'deploy tool', predicate: 'is', object: 'Argo', scope: 'project:web' });
    expect(saved).toMatchObject({ ok: true, saved: 'fact', note_id: expect.stringMatching(/^entry:projects\/web\/daily\/2026-11-01\.md#[0-9a-f]{12}$/) });
    const lines = memoryLines(home);
    expect(lines).toHaveLength(before + 1);
    expect(lines.at(-1)).toMatchObject({ op: 'memory.fact.remembered', at: T0, subject: 'deploy tool', entry: { id: saved.note_id, text: 'We deploy with Argo', factId: String(saved.id).slice(5) } });

    // A fact without a sentence (save_memory) is one line too, and a replacement keeps history.
    clock += 60_000;
    await call(s, 'save_memory', { subject: 'deploy tool', predicate: 'is', object: 'Flux', scope: 'project:web' });
    expect(memoryLines(home)).toHaveLength(before + 2);
    expect(memoryLines(home).at(-1)).toMatchObject({ op: 'memory.fact.saved' });

    const entry = await call(s, 'read_memory', { id: saved.note_id });
    expect(entry).toMatchObject({ ok: true, kind: 'entry', text: 'We deploy with Argo' });
    expect(fs.readFileSync(path.join(home, 'vault', 'projects', 'web', 'daily', '2026-11-01.md'), 'utf8')).toContain('We deploy with Argo');
    const history = await call(s, 'retrieve_memory', { subject: 'deploy tool', include_history: true });
    expect((history.values as { object: string; status: string }[]).map((v) => [v.object, v.status])).toEqual([['Flux', 'current'], ['Argo', 'historical']]);
    expect(await call(s, 'get_context', { query: 'deploy Argo' })).toMatchObject({ index: { stale: false, changed_files: 0 } });

    // Another process replays the one line into the same rows.
    const other = await openTemp(home, () => clock);
    expect(picture(other)).toEqual(picture(s));
    s.store.close();
    other.store.close();
  });

  it('still replays journals that hold a fact and its entry as two lines, into the rows one line makes', async () => {
    const fact = { at: T0, id: '0mh0abc001122334455', subject: 'deploy tool', predicate: 'is', object: 'Argo', scope: 'global', source: 'cli', statement: 'We deploy with Argo', cites: ['https://example.org/runbook'] };
    const entry = { id: 'entry:daily/2026-11-01.md#0123456789ab', path: 'daily/2026-11-01.md', day: '2026-11-01', text: 'We deploy with Argo', scope: 'global', source: 'cli', timezone: null, cites: ['https://example.org/runbook'], factId: fact.id };
    const oldHome = tempHome('remember-old');
    // Exactly what earlier builds appended: the fact, then its entry (without a file stat, as before the vault).
    fs.writeFileSync(
      path.join(oldHome, 'journal.jsonl'),
      `${JSON.stringify({ op: 'memory.fact.saved', ...fact })}\n${JSON.stringify({ op: 'memory.note.added', at: T0, ...entry })}\n`,
    );
    const newHome = tempHome('remember-new');
    fs.writeFileSync(path.join(newHome, 'journal.jsonl'), `${JSON.stringify({ op: 'memory.fact.remembered', ...fact, entry })}\n`);
    const old = await openTemp(oldHome, () => T0);
    const now = await openTemp(newHome, () => T0);
    expect(old.store.warnings).toEqual([]);
    expect(now.store.warnings).toEqual([]);
    const oldRows = picture(old);
    expect(oldRows.facts).toHaveLength(1);
    expect(oldRows.notes).toEqual([expect.objectContaining({ id: entry.id, fact_id: fact.id })]);
    expect(oldRows.fts).toHaveLength(2);
    expect(picture(now)).toEqual(oldRows);
    old.store.close();
    now.store.close();
  });

  it('writes nothing when a fact with a sentence is refused', async () => {
    const home = tempHome('remember-refused');
    const s = await openTemp(home, () => T0);
    expect(await call(s, 'remember', { statement: 'x', subject: 'a', predicate: 'b', object: 'c', timezone: 'Mars/Olympus' })).toMatchObject({ ok: false });
    expect(await call(s, 'remember', { statement: 'x', subject: 'a', predicate: 'b', object: 'c', scope: 'team' })).toMatchObject({ ok: false });
    expect(fs.existsSync(path.join(home, 'journal.jsonl')) ? journalLines(home) : []).toEqual([]);
    expect(fs.existsSync(path.join(home, 'vault', 'daily'))).toBe(false);
    s.store.close();
  });
});
