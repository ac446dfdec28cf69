import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '../../src/core/store/sqlite';
import { connectMcp, type McpSession } from './helpers/mcpClient';
import { openTemp, tempHome } from './helpers/tempStore';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Keeps `parallel` writers busy until stopped; returns the ids of the writes the server acknowledged. */
function writeStorm(mcp: McpSession, label: string, parallel: number, count = Infinity) {
  const acked: string[] = [];
  let stopped = false;
  const loops = Array.from({ length: parallel }, async (_, w) => {
    for (let i = 0; !stopped && i < count; i++) {
      try {
        const r = await mcp.call('remember', { statement: `storm ${label} writer ${w} write ${i}` });
        if (r.ok === true) acked.push(String(r.id));
      } catch {
        return; // the server is gone: this write was never acknowledged
      }
    }
  });
  return { acked, done: Promise.allSettled(loops), stop: () => (stopped = true) };
}

async function noteIds(home: string): Promise<Set<string>> {
  const s = await openTemp(home);
  try {
    return new Set(queryRows(s.store.db, 'SELECT id FROM notes').map((r) => String(r.id)));
  } finally {
    s.store.close();
  }
}

describe('durability of acknowledged writes', () => {
  it('kill -9 of the MCP server during a write storm loses no acknowledged write (several random instants)', async () => {
    const home = tempHome('kill9');
    const allAcked: string[] = [];
    for (let round = 0; round < 4; round++) {
      const mcp = await connectMcp(home);
      const pid = mcp.transport.pid as number;
      const storm = writeStorm(mcp, `round ${round}`, 4);
      // The random instant is counted from the first acknowledgement, so a slow start on a
      // loaded machine cannot turn the round into one with nothing to check.
      while (storm.acked.length === 0) await sleep(5);
      const instant = Math.floor(Math.random() * 600);
      await sleep(instant);
      process.kill(pid, 'SIGKILL');
      storm.stop();
      await storm.done;
      await mcp.close().catch(() => undefined);
      allAcked.push(...storm.acked);
      const present = await noteIds(home);
      const lost = allAcked.filter((id) => !present.has(id));
      expect(lost, `round ${round}: killed after ${instant} ms with ${storm.acked.length} acknowledged`).toEqual([]);
      expect(storm.acked.length).toBeGreaterThan(0);
    }
  });

  it('two server processes writing one store at once lose nothing and converge', async () => {
    const home = tempHome('two');
    const [a, b] = await Promise.all([connectMcp(home, 'agent-a'), connectMcp(home, 'agent-b')]);
    try {
      const stormA = writeStorm(a, 'from a', 3, 40);
      const stormB = writeStorm(b, 'from b', 3, 40);
      // Both also race on one fact: the ledger must keep every value and agree on the current one.
      const facts = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).call('save_memory', { subject: 'race', predicate: 'winner', object: `value ${i}` })),
      );
      await Promise.all([stormA.done, stormB.done]);
      expect(stormA.acked).toHaveLength(120);
      expect(stormB.acked).toHaveLength(120);
      expect(facts.every((f) => f.ok === true)).toBe(true);

      for (const side of [a, b]) {
        const status = await side.call('memory_status', {});
        expect(status).toMatchObject({ entries: 240, facts: 20, current_facts: 1 });
        const other = await side.call('search_text', { query: side === a ? '"from b" writer' : '"from a" writer', top_k: 50 });
        expect(other.total).toBe(120);
      }
      const [fromA, fromB] = await Promise.all([a, b].map((side) => side.call('retrieve_memory', { subject: 'race', include_history: true })));
      expect(fromA).toEqual(fromB);
      expect((fromA!.values as unknown[]).length).toBe(20);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('damaged store files', () => {
  it('a truncated snapshot is reported, kept aside byte for byte, and the memory rebuilt from the journal', async () => {
    const home = tempHome('trunc');
    const s = await openTemp(home);
    for (let i = 0; i < 30; i++) await s.memory.remember({ statement: `note number ${i} about kestrel` }, 'test');
    s.store.close(); // checkpoints
    const snapshot = path.join(home, 'store.sqlite');
    const whole = fs.readFileSync(snapshot);
    fs.truncateSync(snapshot, Math.floor(whole.length / 2));
    const damaged = fs.readFileSync(snapshot);

    const reopened = await openTemp(home);
    try {
      const status = reopened.memory.status();
      expect(status.warnings.join('\n')).toMatch(/damaged: the compressed file cannot be read \(.*truncated or corrupt\)/);
      const aside = fs.readdirSync(home).filter((f) => f.startsWith('store.sqlite.corrupt-'));
      expect(aside).toHaveLength(1);
      expect(fs.readFileSync(path.join(home, aside[0]!)).equals(damaged)).toBe(true);
      expect(status.entries).toBe(30);
    } finally {
      reopened.store.close();
    }
  });

  it('a journal shorter than the snapshot covers is a clear error and nothing is touched', async () => {
    const home = tempHome('journal');
    const s = await openTemp(home);
    for (let i = 0; i < 5; i++) await s.memory.remember({ statement: `entry ${i}` }, 'test');
    s.store.close();
    const journal = path.join(home, 'journal.jsonl');
    fs.truncateSync(journal, 10);
    const before = fs.readdirSync(home).sort();
    const snapshotBytes = fs.readFileSync(path.join(home, 'store.sqlite'));
    await expect(openTemp(home)).rejects.toThrow(/journal .* was truncated or replaced/);
    expect(fs.readdirSync(home).sort()).toEqual(before);
    expect(fs.readFileSync(path.join(home, 'store.sqlite')).equals(snapshotBytes)).toBe(true);
  });

  it('a torn last journal line (crash mid-write) is skipped and counted, later writes are kept', async () => {
    const home = tempHome('torn');
    const s = await openTemp(home);
    await s.memory.remember({ statement: 'before the crash' }, 'test');
    fs.appendFileSync(path.join(home, 'journal.jsonl'), '{"op":"memory.note.added","at":17');
    await s.memory.remember({ statement: 'after the crash' }, 'test');
    s.store.close();
    const again = await openTemp(home);
    try {
      const status = again.memory.status();
      expect(status.entries).toBe(2);
      expect(status.store.journal_problems).toBe(1);
    } finally {
      again.store.close();
    }
  });

  it('a lock left by a killed process does not block the next writer', async () => {
    const home = tempHome('lock');
    const s = await openTemp(home);
    fs.writeFileSync(path.join(home, 'journal.lock'), `999999 ${os.hostname()} deadbeef`);
    const started = Date.now();
    await s.memory.remember({ statement: 'through a stale lock' }, 'test');
    expect(Date.now() - started).toBeLessThan(2000);
    s.store.close();
  });
});
