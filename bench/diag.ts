import { STORE_MODULES, type Services } from '../src/core/services';
import { migrate } from '../src/core/store/schema';
import { readSnapshot } from '../src/core/store/snapshot';
import { memoryModule } from '../src/core/memory/memorySchema';
import { MEMORY_FTS } from '../src/core/memory/memorySchema';
import { searchFts, snippets } from '../src/core/search/ftsSearch';
import { parseMatchQuery } from '../src/core/search/matchQuery';
import { loadSqlJs, queryRows, queryScalar, type Database } from '../src/core/store/sqlite';
import { countTokens } from '../src/core/text/tokens';
import { iso } from '../src/core/text/time';
import { QUERY_CLASSES, type BenchQuery } from './corpus';
import { referenceSearchFts } from './referenceScorer';
import { heading, median, ms, nowMs, percentile, table } from './stats';

/**
 * Where the time of one search_text goes: each step of MemoryService.searchText and of
 * searchFts timed on its own, plus alternative SQL shapes for the matchinfo pass.
 */
export function runDiag(services: Services, queries: BenchQuery[], runs: number): void {
  const db = services.store.db;
  const t = MEMORY_FTS;
  const now = Date.now();
  const steps: Record<string, (q: BenchQuery, match: string, ids: number[]) => unknown> = {
    'searchFts': (q) => searchFts(db, t, { query: q.text, limit: 20, sort: 'relevance', now }),
    'reference': (q) => referenceSearchFts(db, t, { query: q.text, limit: 20, sort: 'relevance', now }),
    'searchFts hybrid': (q) => searchFts(db, t, { query: q.text, limit: 20, sort: 'hybrid', now }),
    'stats pcnax': (_q, m) => queryScalar(db, `SELECT hex(matchinfo(${t}, 'pcnax')) FROM ${t} WHERE ${t} MATCH ? LIMIT 1`, [m]),
    'stat table': () => queryScalar(db, `SELECT value FROM ${t}_stat WHERE id = 0`),
    'count(*)': (_q, m) => queryScalar(db, `SELECT count(*) FROM ${t} WHERE ${t} MATCH ?`, [m]),
    'gc(docid)': (_q, m) => queryScalar(db, `SELECT group_concat(docid, ',') FROM ${t} WHERE ${t} MATCH ?`, [m]),
    'CTE ly': (_q, m) =>
      queryScalar(db, `WITH m AS MATERIALIZED (SELECT docid, created_at, matchinfo(${t}, 'ly') AS mi FROM ${t} WHERE ${t} MATCH ?)
        SELECT group_concat(docid || ',' || created_at || ',' || hex(mi), ';') FROM m`, [m]),
    'CTE y': (_q, m) =>
      queryScalar(db, `WITH m AS MATERIALIZED (SELECT docid, created_at, matchinfo(${t}, 'y') AS mi FROM ${t} WHERE ${t} MATCH ?)
        SELECT group_concat(docid || ',' || created_at || ',' || hex(mi), ';') FROM m`, [m]),
    'CTE ly no created': (_q, m) =>
      queryScalar(db, `WITH m AS MATERIALIZED (SELECT docid, matchinfo(${t}, 'ly') AS mi FROM ${t} WHERE ${t} MATCH ?)
        SELECT group_concat(docid || ',' || hex(mi), ';') FROM m`, [m]),
    'agg ly direct': (_q, m) => {
      try {
        return queryScalar(db, `SELECT group_concat(docid || ',' || created_at || ',' || hex(matchinfo(${t}, 'ly')), ';') FROM ${t} WHERE ${t} MATCH ?`, [m]);
      } catch {
        return undefined;
      }
    },
    'CTE ly substr': (_q, m) => {
      const p = parseMatchQuery(m)?.phrases.length ?? 1;
      const parts = ['hex(substr(mi, 1, 4))'];
      for (let i = 0; i < p; i++) parts.push(`hex(substr(mi, ${1 + 16 + 16 * i}, 4))`);
      return queryScalar(db, `WITH m AS MATERIALIZED (SELECT docid, created_at, matchinfo(${t}, 'ly') AS mi FROM ${t} WHERE ${t} MATCH ?)
        SELECT group_concat(docid || ',' || created_at || ',' || ${parts.join(' || ')}, ';') FROM m`, [m]);
    },
    'step rows ly': (_q, m) => {
      const stmt = db.prepare(`SELECT docid, created_at, matchinfo(${t}, 'ly') FROM ${t} WHERE ${t} MATCH ?`);
      let n = 0;
      try {
        stmt.bind([m]);
        while (stmt.step()) {
          stmt.get();
          n++;
        }
      } finally {
        stmt.free();
      }
      return n;
    },
    'snippets(20)': (_q, m, ids) => snippets(db, t, m, ids),
    'snippets 20× docid=?': (_q, m, ids) => {
      const stmt = db.prepare(`SELECT snippet(${t}, '[', ']', '…', 0, 16) FROM ${t} WHERE ${t} MATCH ? AND docid = ?`);
      const out: unknown[] = [];
      try {
        for (const id of ids) {
          stmt.bind([m, id]);
          if (stmt.step()) out.push(stmt.get()[0]);
          stmt.reset();
        }
      } finally {
        stmt.free();
      }
      return out;
    },
    'SELECT 1': () => queryScalar(db, 'SELECT 1'),
    'refs(20)': (_q, _m, ids) => queryRows(db, `SELECT docid, ref, scope, body FROM ${t} WHERE docid IN (${ids.map(() => '?').join(',') || 'NULL'})`, ids),
    'countTokens': (_q, m, ids) => {
      const rows = queryRows(db, `SELECT docid, ref, scope, body FROM ${t} WHERE docid IN (${ids.map(() => '?').join(',') || 'NULL'})`, ids);
      const hits = rows.map((r) => ({ id: String(r.ref), kind: 'note', text: String(r.body), snippet: m, scope: String(r.scope), created_at: iso(now), score: 1.234 }));
      return countTokens(JSON.stringify(hits));
    },
    'searchText': (q) => services.memory.searchText({ query: q.text, top_k: 20 }),
  };
  const names = Object.keys(steps);
  const times = new Map<string, Map<string, number[]>>(); // step → query → samples
  for (const n of names) times.set(n, new Map(queries.map((q) => [q.text, []])));
  const prepared = queries.map((q) => {
    const match = parseMatchQuery(q.text)!.match;
    const found = searchFts(db, t, { query: q.text, limit: 20, sort: 'relevance', now });
    return { q, match, ids: found.ok ? found.hits.map((h) => h.docid) : [], total: found.ok ? found.total : 0 };
  });
  for (let r = -1; r < runs; r++) {
    for (const p of prepared) {
      for (const n of names) {
        const t0 = nowMs();
        steps[n]!(p.q, p.match, p.ids);
        const dt = nowMs() - t0;
        if (r >= 0) times.get(n)!.get(p.q.text)!.push(dt);
      }
    }
  }
  heading('diagnosis: p50 per step, per query class (median over the class\'s samples)');
  table(
    ['step', ...QUERY_CLASSES],
    names.map((n) => [n, ...QUERY_CLASSES.map((cls) => ms(median(prepared.filter((p) => p.q.cls === cls).flatMap((p) => times.get(n)!.get(p.q.text)!))))]),
  );
  console.log('');
  table(
    ['query', 'hits', ...names.slice(0, 10)],
    prepared.map((p) => [p.q.text.slice(0, 24), p.total, ...names.slice(0, 10).map((n) => ms(median(times.get(n)!.get(p.q.text)!)))]),
  );
  void (db as Database);

  // The same scorers with a 64 MB page cache instead of sql.js's default 2 MB.
  db.exec('PRAGMA cache_size = -65536');
  const big = new Map<string, number[]>();
  for (const n of ['searchFts', 'reference', 'searchText']) big.set(n, []);
  for (let r = -1; r < runs; r++) {
    for (const p of prepared) {
      if (p.q.cls !== '1w common' && p.q.cls !== '2w common') continue;
      for (const n of big.keys()) {
        const t0 = nowMs();
        steps[n]!(p.q, p.match, p.ids);
        if (r >= 0) big.get(n)!.push(nowMs() - t0);
      }
    }
  }
  console.log('');
  console.log(`  with PRAGMA cache_size = -65536, common-word queries: ${[...big.entries()].map(([n, v]) => `${n} p50 ${ms(median(v))}`).join(', ')}`);
}

/**
 * Where a remember's CPU time goes, on a scratch copy of a store's snapshot (never the store
 * itself): the applier's SQL inside a transaction, then the COMMIT, where FTS4 flushes its
 * pending terms into a new segment and, every 16th segment, merges a level.
 */
export async function runRememberDiag(wasmPath: string, snapshotFile: string, inputs: string[], automerge?: number): Promise<void> {
  const SQL = await loadSqlJs(wasmPath);
  const db = new SQL.Database(readSnapshot(snapshotFile)); // compressed at rest since issue 3
  migrate(db, STORE_MODULES); // a store saved by an older build gets this build's tables first
  // FTS4's incremental merging: a little merge work after each write instead of an occasional big merge.
  if (automerge !== undefined) db.run(`INSERT INTO ${MEMORY_FTS}(${MEMORY_FTS}) VALUES (?)`, [`automerge=${automerge}`]);
  const apply = memoryModule.appliers['memory.note.added']!;
  const tApply: number[] = [];
  const tCommit: number[] = [];
  const levels = () => queryRows(db, `SELECT level, count(*) AS n FROM ${MEMORY_FTS}_segdir GROUP BY level ORDER BY level`).map((r) => `L${String(r.level)}:${String(r.n)}`).join(' ');
  const before = levels();
  let at = Date.parse('2026-01-02T00:00:00Z');
  for (const [i, text] of inputs.entries()) {
    at += 1000;
    const op = { op: 'memory.note.added', at, id: `entry:daily/2026-01-02.md#${i.toString(16).padStart(12, '0')}`, path: 'daily/2026-01-02.md', day: '2026-01-02', text, scope: 'global', source: 'bench', timezone: null, cites: [], factId: null };
    const t0 = nowMs();
    db.exec('BEGIN');
    db.exec('SAVEPOINT op');
    apply(db, op);
    db.exec('RELEASE op');
    db.run("INSERT INTO meta(key, value) VALUES ('journal_offset', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [String(i)]);
    const t1 = nowMs();
    db.exec('COMMIT');
    const t2 = nowMs();
    tApply.push(t1 - t0);
    tCommit.push(t2 - t1);
  }
  heading(`diagnosis: remember CPU path on a scratch copy of ${snapshotFile.split('/').slice(-2).join('/')}${automerge !== undefined ? `, FTS4 automerge=${automerge}` : ''}`);
  const p = (a: number[], q: number) => ms(percentile(a, q));
  console.log(`  ${inputs.length} notes; FTS4 segments before ${before}, after ${levels()}`);
  console.log(`  apply p50 ${p(tApply, 50)} p99 ${p(tApply, 99)} max ${p(tApply, 100)}; COMMIT p50 ${p(tCommit, 50)} p99 ${p(tCommit, 99)} max ${p(tCommit, 100)}`);
  const slow = tCommit.map((t, i) => [t, i] as const).sort((a, b) => b[0] - a[0]).slice(0, 5);
  console.log(`  slowest COMMITs (ms @ call#): ${slow.map(([t, i]) => `${t.toFixed(1)}@${i}`).join(', ')}`);
  db.close();
}
