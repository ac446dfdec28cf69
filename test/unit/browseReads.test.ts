import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionBrowse } from '../../src/core/history/sessionBrowse';
import { requestOverview } from '../../src/core/requests/requestBrowse';
import { callTool as call } from './helpers/memoryCall';
import { transcriptFixtures } from './helpers/fixtures';
import { openTemp, tempHome } from './helpers/tempStore';

describe('read functions behind the memory browser', () => {
  it('lists error fixes newest first, counting every record', async () => {
    let clock = Date.parse('2026-05-01T10:00:00Z');
    const s = await openTemp(undefined, () => (clock += 1000));
    const errors = s.errors;
    expect(errors.recent(10)).toEqual({ records: [], total: 0 });
    await call(s, 'write_error', { tool_name: 'npm', keywords: ['eresolve'], symptom: 'npm install fails with ERESOLVE', action: 'pin react to 18', outcome: 'resolved' });
    await call(s, 'write_error', { tool_name: 'git', keywords: ['lock'], symptom: 'index.lock exists', action: 'remove the stale lock file', outcome: 'resolved' });
    const r = errors.recent(1);
    expect(r.total).toBe(2);
    expect(r.records).toHaveLength(1);
    expect(r.records[0]).toMatchObject({ tool_name: 'git', action: 'remove the stale lock file', times_recorded: 1 });
    s.store.close();
  });

  it('shows every request between agents to a person, all marked untrusted, with counts by status', async () => {
    const s = await openTemp();
    await call(s, 'whats_new', {}, 'beta');
    await call(s, 'ask_agent', { to: 'beta', request: 'Which port does the dev server use?' }, 'alpha');
    const second = await call(s, 'ask_agent', { to: 'beta', request: 'x'.repeat(2000) }, 'alpha');
    await call(s, 'answer_request', { id: second.id, answer: 'It uses 5173.' }, 'beta');
    const o = requestOverview(s.store, 10);
    expect(o.counts).toEqual({ open: 1, answered: 1, closed: 0 });
    expect(o.requests.map((r) => r.status)).toEqual(['answered', 'open']);
    expect(o.requests[0]).toMatchObject({ from: 'alpha', to: 'beta', request: { untrusted: true, full_chars: 2000 }, answer: { text: 'It uses 5173.', untrusted: true } });
    expect(o.requests[0]?.request.text.length).toBeLessThan(2000);
    s.store.close();
  });

  it('lists the daily log, vault notes, entities and retired memories, and the version moves with each', async () => {
    let clock = Date.parse('2026-05-01T10:00:00Z');
    const s = await openTemp(undefined, () => (clock += 1000));
    const v0 = s.browse.browseVersion();
    await call(s, 'remember_note', { text: 'Deployed 1.4 to staging' });
    await call(s, 'save_memory', { subject: 'api', predicate: 'port', object: '8080' });
    await call(s, 'save_memory', { subject: 'api', predicate: 'port', object: '9090' });
    const v1 = s.browse.browseVersion();
    expect(v1).not.toBe(v0);
    const log = s.browse.dailyLog(10);
    expect(log.total).toBeGreaterThanOrEqual(1);
    const entry = log.items.find((e) => e.text.includes('Deployed 1.4'));
    expect(entry).toMatchObject({ id: expect.stringMatching(/^entry:/), path: expect.stringMatching(/\.md$/), day: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(s.browse.entities(10).items).toEqual([expect.objectContaining({ name: 'api', facts: 2, current_facts: 1 })]);

    expect(s.browse.entry(entry?.id ?? '')).toEqual(entry);
    expect(s.browse.entry('entry:nope')).toBeUndefined();
    await call(s, 'retire_memory', { id: entry?.id });
    expect(s.browse.entry(entry?.id ?? '')).toEqual(entry); // still readable while retired, for Restore's confirmation
    expect(s.browse.dailyLog(10).items.find((e) => e.id === entry?.id)).toBeUndefined();
    expect(s.browse.retired(10)).toMatchObject({ total: 1, items: [{ id: entry?.id, kind: 'entry' }] });
    const v2 = s.browse.browseVersion();
    expect(v2).not.toBe(v1);

    await call(s, 'write_error', { tool_name: 'npm', keywords: ['x'], symptom: 'fails', action: 'fix it', outcome: 'resolved' });
    const v3 = s.browse.browseVersion();
    expect(v3).not.toBe(v2);
    // A rule's project is a folder that exists on this machine.
    await call(s, 'chapters_rule_propose', { text: 'Run the tests before committing.', project: tempHome('project') });
    expect(s.browse.browseVersion()).not.toBe(v3);
    expect(s.browse.vaultNotes(10)).toEqual({ items: [], total: 0 });
    s.store.close();
  });

  it('counts each imported session’s runs', async () => {
    const s = await openTemp();
    await s.importer.importPaths([path.join(transcriptFixtures(), 'claude-code')]);
    const browse = new SessionBrowse(s.store);
    const { sessions } = browse.list({ limit: 5 });
    expect(sessions.length).toBeGreaterThan(0);
    const runs = browse.runCounts(sessions.map((x) => x.id));
    expect(Object.values(runs).every((n) => n >= 1)).toBe(true);
    expect(Object.keys(runs).length).toBeGreaterThan(0);
    expect(browse.runCounts([])).toEqual({});
    s.store.close();
  });
});
