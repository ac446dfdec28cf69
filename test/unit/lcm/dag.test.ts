import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Services } from '../../../src/core/services';
import { queryRows } from '../../../src/core/store/sqlite';
import { transcriptFixtures } from '../helpers/fixtures';
import { tempHome } from '../helpers/tempStore';
import { importedFixtures, openLcm, SMALL_DAG } from './lcmFixture';

const TAIL = SMALL_DAG.freshTailEvents as number;

/** Archived events per session: all but the fresh tail, in seq order. */
function archived(s: Services): Map<string, number[]> {
  const rows = queryRows(s.store.db, 'SELECT e.id, e.session_id FROM events e ORDER BY e.session_id, e.seq, e.id');
  const by = new Map<string, number[]>();
  for (const r of rows) by.set(String(r.session_id), [...(by.get(String(r.session_id)) ?? []), Number(r.id)]);
  for (const [k, ids] of by) by.set(k, ids.slice(0, Math.max(0, ids.length - TAIL)));
  return by;
}

/** Walks every root down to its leaves and counts how often each event is reached. */
function reachCounts(s: Services): Map<number, number> {
  const db = s.store.db;
  const roots = queryRows(db, 'SELECT id FROM lcm_summaries WHERE id NOT IN (SELECT child_id FROM lcm_summary_parents)').map((r) => String(r.id));
  const counts = new Map<number, number>();
  const walk = (id: string) => {
    const children = queryRows(db, 'SELECT child_id FROM lcm_summary_parents WHERE parent_id = ? ORDER BY ord', [id]).map((r) => String(r.child_id));
    for (const c of children) walk(c);
    for (const r of queryRows(db, 'SELECT event_id FROM lcm_summary_sources WHERE summary_id = ?', [id])) counts.set(Number(r.event_id), (counts.get(Number(r.event_id)) ?? 0) + 1);
  };
  roots.forEach(walk);
  return counts;
}

function fullTextOf(s: Services, eventId: number): string {
  const r = queryRows(s.store.db, 'SELECT text, blob FROM events WHERE id = ?', [eventId])[0]!;
  return typeof r.blob === 'string' ? s.store.blobs.get(r.blob)!.toString('utf8') : String(r.text);
}

function assertInvariants(s: Services): void {
  const reach = reachCounts(s);
  const expected = archived(s);
  let events = 0;
  for (const ids of expected.values()) {
    for (const id of ids) {
      expect(reach.get(id), `event ${id} must be reachable from exactly one leaf`).toBe(1);
      events++;
    }
  }
  expect(events).toBeGreaterThan(100);
  // Nothing outside the archived ranges is summarised.
  const archivedIds = new Set([...expected.values()].flat());
  for (const id of reach.keys()) expect(archivedIds.has(id)).toBe(true);
}

describe('summary DAG over the real fixtures', () => {
  it('every archived event is reachable from exactly one leaf, and the ids, depths and footers are as the spec says', async () => {
    const s = await importedFixtures();
    assertInvariants(s);
    const summaries = queryRows(s.store.db, 'SELECT id, depth, kind, content, producer, tokens FROM lcm_summaries');
    expect(Math.max(...summaries.map((r) => Number(r.depth)))).toBeGreaterThanOrEqual(2);
    for (const r of summaries) {
      expect(String(r.id)).toMatch(/^sum_[0-9a-f]{16}$/);
      expect(r.kind).toBe(Number(r.depth) === 0 ? 'leaf' : 'condensed');
      expect(String(r.content).split('\n').at(-1)).toMatch(/^Expand for details about: .+\.$/);
      expect(r.producer).toBe('extractive');
      expect(Number(r.tokens)).toBeGreaterThan(0);
    }
    // Building again finds nothing to do.
    expect(await s.lcm.buildAll()).toMatchObject({ leaves: 0, condensed: 0, removed: 0 });
    s.store.close();
  });

  it('parents cover their children\'s time and sequence ranges, one level apart, and count their descendants', async () => {
    const s = await importedFixtures();
    const edges = queryRows(
      s.store.db,
      `SELECT p.depth AS pd, c.depth AS cd, p.earliest_at AS pe, p.latest_at AS pl, c.earliest_at AS ce, c.latest_at AS cl, p.first_seq AS pf, p.last_seq AS pls, c.first_seq AS cf, c.last_seq AS cls
       FROM lcm_summary_parents e JOIN lcm_summaries p ON p.id = e.parent_id JOIN lcm_summaries c ON c.id = e.child_id`,
    );
    expect(edges.length).toBeGreaterThan(10);
    for (const e of edges) {
      expect(Number(e.pd)).toBe(Number(e.cd) + 1);
      expect(e.ce).not.toBeNull();
      expect(Number(e.pe)).toBeLessThanOrEqual(Number(e.ce));
      expect(Number(e.pl)).toBeGreaterThanOrEqual(Number(e.cl));
      expect(Number(e.pf)).toBeLessThanOrEqual(Number(e.cf));
      expect(Number(e.pls)).toBeGreaterThanOrEqual(Number(e.cls));
    }
    for (const r of queryRows(s.store.db, "SELECT id, descendant_count FROM lcm_summaries WHERE kind = 'condensed'")) {
      const below = Number(queryRows(s.store.db, 'WITH RECURSIVE sub(id) AS (SELECT child_id FROM lcm_summary_parents WHERE parent_id = ? UNION ALL SELECT p.child_id FROM lcm_summary_parents p JOIN sub ON p.parent_id = sub.id) SELECT count(*) AS n FROM sub', [String(r.id)])[0]!.n);
      expect(Number(r.descendant_count)).toBe(below);
    }
    s.store.close();
  });

  it('expanding a leaf returns its sources verbatim, byte for byte, blobs included', async () => {
    const s = await importedFixtures();
    const grant = s.lcm.grants.issue(queryRows(s.store.db, 'SELECT id FROM sessions').map((r) => String(r.id)), 60_000, 10_000_000);
    const leaves = queryRows(s.store.db, "SELECT id FROM lcm_summaries WHERE kind = 'leaf'").map((r) => String(r.id));
    let fromBlob = 0;
    for (const id of leaves) {
      const out = s.lcm.expand(grant.token, { summaryIds: [id], includeMessages: true }) as { ok: boolean; expansions: { messages: { id: number; text: string }[] }[]; withheld?: unknown };
      expect(out.ok).toBe(true);
      expect(out.withheld).toBeUndefined();
      const sources = queryRows(s.store.db, 'SELECT event_id FROM lcm_summary_sources WHERE summary_id = ? ORDER BY ord', [id]).map((r) => Number(r.event_id));
      const messages = out.expansions[0]!.messages;
      expect(messages.map((m) => m.id)).toEqual(sources);
      for (const m of messages) {
        expect(Buffer.from(m.text, 'utf8').equals(Buffer.from(fullTextOf(s, m.id), 'utf8'))).toBe(true);
        if (queryRows(s.store.db, 'SELECT blob FROM events WHERE id = ? AND blob IS NOT NULL', [m.id]).length) fromBlob++;
      }
    }
    expect(fromBlob).toBeGreaterThan(0);
    s.store.close();
  });

  it('large content is kept once as a file_… that the leaf cites, with an exploration summary', async () => {
    const s = await importedFixtures();
    const files = queryRows(s.store.db, 'SELECT f.id, f.event_id, f.tokens, f.exploration, sf.summary_id, x.content FROM lcm_files f JOIN lcm_summary_files sf ON sf.file_id = f.id JOIN lcm_summaries x ON x.id = sf.summary_id WHERE x.kind = \'leaf\'');
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      expect(String(f.id)).toMatch(/^file_[0-9a-f]{16}$/);
      expect(Number(f.tokens)).toBeGreaterThan(SMALL_DAG.largeFileTokens as number);
      expect(String(f.content)).toContain(String(f.id));
      expect(String(f.exploration)).toMatch(/lines, \d+ bytes, \d+ tokens/);
    }
    s.store.close();
  });

  it('builds incrementally as a session grows, and rebuilds what a rewritten snapshot changed', async () => {
    const s = await openLcm();
    const dir = tempHome('lcm-grow');
    const src = path.join(transcriptFixtures(), 'codex/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl');
    const lines = fs.readFileSync(src, 'utf8').split('\n').filter(Boolean);
    const file = path.join(dir, path.basename(src));
    fs.writeFileSync(file, lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n');
    await s.importer.importPaths([file]);
    const first = await s.lcm.buildAll();
    expect(first.leaves).toBeGreaterThan(0);
    const before = new Set(queryRows(s.store.db, "SELECT id FROM lcm_summaries WHERE kind = 'leaf'").map((r) => String(r.id)));
    fs.writeFileSync(file, lines.join('\n') + '\n');
    await s.importer.importPaths([file]);
    const grown = await s.lcm.buildAll();
    expect(grown.leaves).toBeGreaterThan(0);
    expect(grown.removed).toBe(0);
    const after = new Set(queryRows(s.store.db, "SELECT id FROM lcm_summaries WHERE kind = 'leaf'").map((r) => String(r.id)));
    for (const id of before) expect(after.has(id)).toBe(true);
    assertCovered(s);

    // A snapshot format rewritten with an edited request: its leaf (and ancestors) are rebuilt, nothing is left dangling.
    const chat = path.join(dir, 'session.json');
    const data = JSON.parse(fs.readFileSync(path.join(transcriptFixtures(), 'copilot-export/dealenx_chat_succes_mcp.json'), 'utf8'));
    fs.writeFileSync(chat, JSON.stringify(data));
    await s.importer.importPaths([chat]);
    expect((await s.lcm.buildAll()).leaves).toBeGreaterThan(0);
    data.requests[0].message.text += ' (edited)';
    fs.writeFileSync(chat, JSON.stringify(data));
    fs.utimesSync(chat, new Date(), new Date(Date.now() + 5000));
    await s.importer.importPaths([chat]);
    const rebuilt = await s.lcm.buildAll();
    expect(rebuilt.removed).toBeGreaterThan(0);
    expect(queryRows(s.store.db, 'SELECT 1 FROM lcm_summary_sources src LEFT JOIN events e ON e.id = src.event_id WHERE e.id IS NULL OR e.hash != src.hash')).toEqual([]);
    assertCovered(s);
    s.store.close();
  });

  it('two processes building the same store never cover an event twice, and both see the same DAG', async () => {
    const home = tempHome('lcm-two');
    const a = await openLcm({}, home);
    await a.importer.importPaths([transcriptFixtures()]);
    const b = await openLcm({}, home);
    const [ra, rb] = await Promise.all([a.lcm.buildAll(), b.lcm.buildAll()]);
    expect(ra.leaves + rb.leaves).toBe(Number(queryRows(a.store.db, "SELECT count(*) AS n FROM lcm_summaries WHERE kind = 'leaf'")[0]!.n));
    const dag = (x: Services) => queryRows(x.store.db, 'SELECT summary_id, event_id FROM lcm_summary_sources ORDER BY event_id');
    expect(dag(b)).toEqual(dag(a));
    assertInvariants(a);
    a.store.close();
    b.store.close();
  });
});

/** Every archived event of every session in the store is in exactly one leaf. */
function assertCovered(s: Services): void {
  const reach = reachCounts(s);
  for (const ids of archived(s).values()) for (const id of ids) expect(reach.get(id)).toBe(1);
}
