import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionIdOf } from '../../src/core/history/importer';
import { POOL_BLOB_MAX } from '../../src/core/pool/poolBlobs';
import { PoolStateFile } from '../../src/core/pool/poolState';
import type { Services } from '../../src/core/services';
import { queryRows, queryScalar } from '../../src/core/store/sqlite';
import { checkedCall } from './helpers/checkedCall';
import { writeClaudeSession, type Step } from './helpers/claudeTranscript';
import { CLI } from './helpers/mcpClient';
import { memberPassword, startPoolPostgres, type PostgresServer } from './helpers/postgres';
import { openTemp, tempHome } from './helpers/tempStore';
import { closeMachines, exited, poolMachine, waitUntil, type Machine } from './helpers/poolMachines';

/**
 * What has no memory scope of its own (error fixes, chapter archives with their plans, rule
 * proposals) travels through the team pool once a person marks it for the team, with chapters'
 * blobs beside it; what was not marked never leaves, and approvals stay per machine.
 */
const TEAM = 'core';
const password = memberPassword;
const WORKSPACE = '/work/demo';

let pg: PostgresServer;

beforeAll(async () => {
  pg = await startPoolPostgres([{ team: TEAM, members: ['alice', 'bob', 'erin'] }]);
}, 60_000);

afterAll(() => pg?.remove());

function machine(user: string, home = tempHome(`share-${user}`)): Promise<Machine> {
  return poolMachine(pg, TEAM, user, home);
}

/** `recollect pool share core errors,chapters,rules`, as a person runs it. */
function shareAll(home: string): void {
  const r = spawnSync(process.execPath, [CLI, 'pool', 'share', TEAM, 'errors,chapters,rules'], { env: { ...process.env, RECOLLECT_HOME: home }, encoding: 'utf8' });
  expect(r.status).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, shared: { team: TEAM, kinds: ['errors', 'chapters', 'rules'] } });
  expect(new PoolStateFile(home).read().share).toEqual({ team: TEAM, kinds: ['errors', 'chapters', 'rules'] });
}

function count(m: Machine | Services, sql: string, params: (string | number)[] = []): number {
  const s = 'services' in m ? m.services : m;
  return Number(queryScalar(s.store.db, sql, params));
}

const call = (m: Machine | Services, name: string, input: object) => checkedCall('services' in m ? m.services : m, name, input, { client: 'claude-code', workspace: WORKSPACE });

/** A finished Claude Code session with a plan (TodoWrite), imported; returns its store id. */
async function importSession(s: Services, label: string, bigResult = ''): Promise<string> {
  const dir = tempHome(`share-transcripts-${label}`);
  const id = createHash('sha256').update(label + Math.random()).digest('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12}).*/, '$1-$2-$3-$4-$5');
  const steps: Step[] = [
    { user: `Set up the ${label} parser` },
    { tool: 'Bash', id: 'toolu_a1', input: { command: 'cat big.log' } },
    { result: `${label} output\n${bigResult}`, id: 'toolu_a1' },
    { assistant: `The ${label} parser lives in src.` },
    { user: `Now plan the ${label} tests` },
    { tool: 'TodoWrite', id: 'toolu_a2', input: { todos: [{ content: `Write ${label} parser tests`, status: 'in_progress', activeForm: 'Writing' }, { content: 'Run them', status: 'pending', activeForm: 'Running' }] } },
    { result: 'Todos have been modified successfully.', id: 'toolu_a2' },
    { assistant: 'Tests are planned.' },
  ];
  writeClaudeSession(dir, id, steps, WORKSPACE);
  await s.importer.importPaths([dir]);
  return sessionIdOf('claude-code', id);
}

/** A log of about `bytes` bytes, its lines numbered and salted so no two logs are alike. */
function bigLog(bytes: number): string {
  const salt = randomBytes(4).toString('hex');
  const lines: string[] = [];
  for (let n = 0, i = 0; n < bytes; i++) {
    const line = `${salt} step ${i} finished in ${(i * 7919) % 1000} ms`;
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join('\n');
}

async function archive(s: Services, sessionId: string, title: string) {
  return call(s, 'chapters_continue', { sessionId, chapters: [{ startSeq: 1, endSeq: 8, title, summary: `${title}, archived` }], handoffNote: 'carry on' });
}

async function serverRows(sql: string): Promise<Record<string, unknown>[]> {
  const admin = await pg.admin();
  try {
    return (await admin.query(sql)).rows;
  } finally {
    await admin.end();
  }
}

const fix = (symptom: string) => ({ tool_name: 'run_tests', keywords: ['vitest', 'timeout'], symptom, action: 'raise the hook timeout to 60 s', outcome: 'resolved' });

describe('sharing error fixes, chapters, plans and rule proposals through the team pool', () => {
  it('two stores converge on what is marked for the team, blobs included; what is not marked never leaves; approvals stay per machine', async () => {
    const [a, b] = [await machine('alice'), await machine('bob')];
    try {
      // Before sharing is turned on: this machine's own.
      expect(await call(a, 'write_error', fix('private failure of alice before sharing'))).toMatchObject({ recorded: true, scope: 'global' });
      const privateChapter = await archive(a.services, await importSession(a.services, 'privatezebra'), 'Private zebra work');
      const privateRule = await call(a, 'chapters_rule_propose', { text: 'Private rule: never share this one' });
      expect(privateRule).toMatchObject({ ok: true });

      const unknown = spawnSync(process.execPath, [CLI, 'pool', 'share', TEAM, 'errors,chats'], { env: { ...process.env, RECOLLECT_HOME: a.home }, encoding: 'utf8' });
      expect(unknown.status).toBe(2);
      expect(unknown.stdout).toContain('chats: not a kind that can be shared; choose from errors, chapters, rules');
      shareAll(a.home);
      shareAll(b.home);
      // The same fix on both machines lands on one record, confirmed twice, everywhere.
      const teamFix = await call(a, 'write_error', fix('vitest hook timed out in beforeAll'));
      expect(teamFix).toMatchObject({ recorded: true, new: true, scope: 'team:core' });
      expect(await call(b, 'write_error', fix('vitest hook timed out in beforeAll'))).toMatchObject({ hash: teamFix.hash });
      await call(b, 'write_error', { ...fix('bob alone saw the flaky socket'), keywords: ['socket'] });
      const teamChapter = await archive(a.services, await importSession(a.services, 'teamotter'), 'Team otter work');
      const chapterRow = (teamChapter.chapters as { id: string; sha256: string }[])[0]!;
      const rule = await call(a, 'chapters_rule_propose', { text: 'Run the team pool tests against a real PostgreSQL' });
      expect(rule.text).toContain('shared with team:core through the team pool; each machine\'s approval stays its own');
      expect(privateRule.text).not.toContain('team pool');
      const approved = await a.services.rules.approve(String(rule.id), a.services.rules.machine.current(), 'Alice');
      expect(approved).toMatchObject({ ok: true, rule: { status: 'approved' } });

      // A chapter whose blob is over the pool's limit is archived here only, and the answer says so.
      const huge = await archive(a.services, await importSession(a.services, 'hugeheron', bigLog(POOL_BLOB_MAX + 1000)), 'Huge heron work');
      expect((huge.warnings as string[]).join('\n')).toMatch(new RegExp(`is \\d+ bytes, over the team pool's limit of ${POOL_BLOB_MAX} bytes for one blob, so it stays on this machine`));

      for (const m of [a, b, a, b]) expect(await m.pool.sync()).toMatchObject({ pushed: expect.any(Number) });

      // Error fixes: the team's on both, the private one only where it was written.
      for (const m of [a, b]) {
        const found = m.services.errors.history({ query: 'vitest timeout', limit: 16 }) as { door: string; records: { symptom: string; scope: string; times_recorded: number }[] };
        expect(found.records.map((r) => r.symptom).sort()).toEqual(m === a ? ['private failure of alice before sharing', 'vitest hook timed out in beforeAll'] : ['vitest hook timed out in beforeAll']);
        expect(found.records.find((r) => r.scope === 'team:core')?.times_recorded).toBe(2);
        expect(count(m, "SELECT count(*) FROM errors WHERE scope = 'team:core'")).toBe(2);
      }
      const onB = await call(b, 'error_history', { query: 'vitest timeout' });
      expect(onB.door).toMatch(/^the pool mirror of team core \(pulled up to operation \d+\)$/);
      expect(await call(b, 'error_history', { hash: String(teamFix.hash) })).toMatchObject({ door: expect.stringMatching(/^the pool mirror of team core/), record: { scope: 'team:core' } });
      // A's own private fix answers from this machine's store, with a mirror pulled.
      expect(await call(a, 'error_history', { query: 'private failure' })).toMatchObject({ door: "this machine's store" });

      // Chapters and plans: on b with their blobs, byte for byte, under the same address.
      const chapterOnB = queryRows(b.services.store.db, 'SELECT id, sha256, scope FROM chapters')[0];
      expect(queryRows(b.services.store.db, 'SELECT id, sha256, scope FROM chapters')).toHaveLength(1);
      expect(chapterOnB).toEqual({ id: chapterRow.id, sha256: chapterRow.sha256, scope: 'team:core' });
      expect(b.services.store.blobs.get(chapterRow.sha256)?.equals(a.services.store.blobs.get(chapterRow.sha256)!)).toBe(true);
      const found = await call(b, 'chapters_search', { query: 'teamotter', budget: 2000 });
      expect(found.door).toMatch(/^the pool mirror of team core/);
      expect(found.note).toMatch(/^answered by the pool mirror of team core/);
      const hits = found.results as { kind: string; id: string; path: string }[];
      expect(hits.map((h) => h.kind).sort()).toEqual(['chapter', 'plan']);
      for (const h of hits) expect(fs.existsSync(h.path)).toBe(true);
      const plan = hits.find((h) => h.kind === 'plan')!;
      expect(count(b, 'SELECT count(*) FROM chapter_plans WHERE id = ? AND scope = ?', [plan.id, 'team:core'])).toBe(1);
      const read = await call(b, 'chapters_artifact', { ref: plan.id, action: 'read' });
      expect(JSON.stringify(read)).toContain('Write teamotter parser tests');
      // The private chapter, the huge one and every child session stay with alice.
      expect(await call(b, 'chapters_search', { query: 'privatezebra' })).toMatchObject({ total: 0 });
      expect(count(b, 'SELECT count(*) FROM chapters WHERE id = ?', [(privateChapter.chapters as { id: string }[])[0]!.id])).toBe(0);
      expect(count(b, "SELECT count(*) FROM chapters WHERE title LIKE 'Huge heron%'")).toBe(0);
      expect(count(a, "SELECT count(*) FROM chapters WHERE title LIKE 'Huge heron%' AND scope = 'global'")).toBe(1);
      expect(count(b, 'SELECT count(*) FROM child_sessions')).toBe(0);
      expect(await call(a, 'chapters_search', { query: 'privatezebra' })).toMatchObject({ door: "this machine's store" });

      // Rule proposals travel; the approval made on alice's machine does not.
      const views = (m: Machine) => m.services.rules.list().map((r) => ({ id: r.id, status: r.status, sharedScope: r.sharedScope }));
      expect(views(b)).toEqual([{ id: rule.id, status: 'pending', sharedScope: 'team:core' }]);
      expect(views(a)).toContainEqual({ id: rule.id, status: 'approved', sharedScope: 'team:core' });
      expect(views(a)).toContainEqual({ id: privateRule.id, status: 'pending', sharedScope: null });

      // On the server: each operation and each blob once, nothing private, no approval, no child session.
      const ops = await serverRows("SELECT op_id, body FROM recollect.ops WHERE team = 'core'");
      const bodies = ops.map((r) => String(r.body));
      expect(new Set(ops.map((r) => r.op_id)).size).toBe(ops.length);
      for (const secret of ['private failure', 'zebra', 'Private rule', 'Huge heron', 'rules.decided', 'rcs_', '"child"']) expect(bodies.filter((x) => x.includes(secret))).toEqual([]);
      expect(bodies.filter((x) => x.includes('"op":"errors.recorded"'))).toHaveLength(3);
      expect(bodies.filter((x) => x.includes('"op":"chapters.shared"'))).toHaveLength(1);
      expect(bodies.filter((x) => x.includes('"op":"rules.proposed"'))).toHaveLength(1);
      const blobs = await serverRows("SELECT sha256, octet_length(bytes)::int AS n FROM recollect.blobs WHERE team = 'core'");
      const planSha = String(queryScalar(a.services.store.db, 'SELECT sha256 FROM chapter_plans WHERE id = ?', [plan.id]));
      expect(blobs.map((r) => r.sha256).sort()).toEqual([chapterRow.sha256, planSha].sort());

      // Syncing again moves nothing, and no fix is confirmed a third time.
      expect(await a.pool.sync()).toEqual({ pushed: 0, pulled: 0 });
      expect(await b.pool.sync()).toEqual({ pushed: 0, pulled: 0 });
      expect(count(b, "SELECT times_recorded FROM errors WHERE scope = 'team:core' AND symptom LIKE 'vitest%'")).toBe(2);
    } finally {
      await closeMachines(a, b);
    }
  }, 120_000);

  it('kill -9 in the middle of pushing chapter blobs, and of pulling them, loses nothing and stores nothing twice', async () => {
    const sessions = 16;
    const homeA = tempHome('share-kill-a');
    shareAll(homeA);
    const a = await openTemp(homeA);
    const expected: string[] = [];
    try {
      for (let i = 0; i < sessions; i++) {
        // About a megabyte each, so the push takes long enough to be killed in the middle.
        const r = await archive(a, await importSession(a, `killkite${i}`, bigLog(1_000_000)), `Kite ${i}`);
        expected.push((r.chapters as { sha256: string }[])[0]!.sha256);
      }
      for (const sha of queryRows(a.store.db, 'SELECT sha256 FROM chapter_plans').map((r) => String(r.sha256))) expected.push(sha);
    } finally {
      a.store.close();
    }
    const onServer = async () => Number((await serverRows("SELECT count(*) AS n FROM recollect.ops WHERE body LIKE '%Kite %'"))[0]!.n);
    // One continue per push transaction, so the kill lands between blobs already committed and the next.
    const push = spawn(process.execPath, [CLI, 'pool', 'sync', '--batch', '1'], { env: cliEnv(homeA, 'erin'), stdio: ['ignore', 'ignore', 'inherit'] });
    await waitUntil('the push to be under way', async () => (await onServer()) > 0, 60_000, 10);
    push.kill('SIGKILL');
    await exited(push);
    const partial = await onServer();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(sessions);
    // Every operation that reached the pool has its blobs there: the kill took none of them half-way.
    const committed = await serverRows("SELECT body FROM recollect.ops WHERE body LIKE '%Kite %'");
    const named = committed.flatMap((r) => {
      const op = JSON.parse(String(r.body)) as { chapters: { sha256: string }[]; plans: { sha256: string }[] };
      return [...op.chapters, ...op.plans].map((c) => c.sha256);
    });
    const present = new Set((await serverRows("SELECT sha256 FROM recollect.blobs WHERE team = 'core'")).map((r) => String(r.sha256)));
    expect(named.filter((h) => !present.has(h))).toEqual([]);
    // And no blob of an operation that did not commit is there: the killed transaction left nothing.
    expect(expected.filter((h) => present.has(h) && !named.includes(h))).toEqual([]);

    expect(await exited(spawn(process.execPath, [CLI, 'pool', 'sync'], { env: cliEnv(homeA, 'erin'), stdio: ['ignore', 'ignore', 'inherit'] }))).toBe(0);
    expect(await onServer()).toBe(sessions);
    const stored = await serverRows(`SELECT sha256, count(*)::int AS n, bool_and(encode(sha256(bytes), 'hex') = sha256) AS whole FROM recollect.blobs WHERE sha256 IN (${expected.map((h) => `'${h}'`).join(',')}) GROUP BY sha256`);
    expect(stored).toHaveLength(new Set(expected).size);
    expect(stored.every((r) => r.n === 1 && r.whole === true)).toBe(true);

    // A pull killed half-way (blobs written, their line maybe not) and run again: every chapter
    // with its blob, each once.
    const homeB = tempHome('share-kill-b');
    const pull = spawn(process.execPath, [CLI, 'pool', 'sync', '--batch', '1'], { env: cliEnv(homeB, 'bob'), stdio: ['ignore', 'ignore', 'inherit'] });
    const journal = path.join(homeB, 'journal.jsonl');
    await waitUntil('the pull to be under way', async () => fs.existsSync(journal) && fs.readFileSync(journal, 'utf8').split('"op":"chapters.shared"').length > 3, 60_000, 10);
    pull.kill('SIGKILL');
    await exited(pull);
    const halfway = await openTemp(homeB);
    try {
      const pulled = count(halfway, "SELECT count(*) FROM chapters WHERE title LIKE 'Kite %'");
      expect(pulled).toBeGreaterThan(0);
      expect(pulled).toBeLessThan(sessions);
    } finally {
      halfway.store.close();
    }
    const b = await machine('bob', homeB);
    try {
      expect(await b.pool.sync()).toMatchObject({ pulled: expect.any(Number) });
      expect(count(b, "SELECT count(*) FROM chapters WHERE title LIKE 'Kite %'")).toBe(sessions);
      expect(count(b, "SELECT count(DISTINCT id) FROM chapters WHERE title LIKE 'Kite %'")).toBe(sessions);
      for (const sha of expected) expect(createHash('sha256').update(b.services.store.blobs.get(sha) ?? '').digest('hex')).toBe(sha);
      expect(count(b, 'SELECT count(*) FROM pool_applied')).toBe(count(b, 'SELECT count(DISTINCT op_id) FROM pool_applied'));
    } finally {
      await closeMachines(b);
    }
  }, 180_000);
});

function cliEnv(home: string, user: string): NodeJS.ProcessEnv {
  return { ...process.env, RECOLLECT_HOME: home, RECOLLECT_POOL_URL: pg.url(user), RECOLLECT_POOL_TEAM: TEAM, PGPASSWORD: password(user) };
}

