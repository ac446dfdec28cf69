import * as path from 'node:path';
import { openServices, type Services } from '../src/core/services';
import { semanticConfigFrom } from '../src/core/memory/semantic/semanticConfig';
import { SemanticService } from '../src/core/memory/semantic/semanticService';
import { memoryModule, type FactSaved } from '../src/core/memory/memorySchema';
import type { Operation } from '../src/core/store/journal';
import { countTokens } from '../src/core/text/tokens';
import { getContextTool } from '../src/core/tools/getContext';
import { SEMANTIC_CANDIDATES } from '../src/core/memory/recall/recallService';
import { SignTable } from '../src/core/memory/semantic/signTable';
import { addBenchVectors, type VectorFigures } from './benchVectors';
import { bulkLoad } from './bulkLoad';
import { printNativeCallers, printSelfTime, profiled } from './cpuProfile';
import { sqlProfile } from './sqlProfile';
import type { BenchContext } from './context';
import { defaultFixturesDir, loadVocabulary, messageGenerator } from './corpus';
import { gc } from './memorySampler';
import { Rng } from './rng';
import { heading, median, ms, note, nowMs, percentile, progress, result, table } from './stats';

/**
 * Section 6: get_context at 50k current facts (+50k superseded) and 20k notes, bulk-loaded
 * through the memory module's own appliers (bench/bulkLoad.ts), plus a few hundred standing
 * rules, every memory with a vector (bench/benchVectors.ts), so each call embeds its query and
 * ranks by meaning as on a real store; a fixed list of realistic requests and permission
 * questions; p95 against 30 ms, and every reply measured with countTokens against its max_tokens.
 */

const QUERIES = [
  'how do we deploy the web app to staging',
  'which database does the billing service use',
  'fix the flaky login test in CI',
  'what port does the dev server run on',
  'set up the local environment for a new contributor',
  'the build fails with a TypeScript error about missing types',
  'how are API keys stored and rotated',
  'what did we decide about the caching layer',
  'upgrade React to the latest version',
  'where are the logs of the background worker',
  'write release notes for version 2.3',
  'the docker container exits immediately after start',
  'how is authentication handled between services',
  'which model does the chatbot use by default',
  'configure ollama as a local embedding provider',
  'summarise what changed in the parser last week',
  'run the unit tests for the importer',
  'why is the search slow on large stores',
  'rename the settings file and update the imports',
  'who owns the infrastructure repository',
  'add pagination to the sessions list',
  'what is the naming convention for branches',
];

/** Questions that ask whether something may be done: standing rules should come first. `rule` names the subject expected among the facts. */
const PERMISSION_QUESTIONS = [
  { q: 'May I deploy to production on a Friday afternoon?', rule: 'production deploys' },
  { q: 'Can we force push to the main branch?', rule: 'main branch' },
  { q: 'Is it okay to add a new npm dependency to the extension?', rule: 'new dependencies' },
  { q: 'Am I allowed to run database migrations on the shared staging database?', rule: 'database migrations' },
  { q: 'Should I ask before rotating the API keys?', rule: 'api keys' },
  { q: 'Do I need approval to change the public API of the store?', rule: 'public api' },
  { q: 'Can I commit the .env file with the secrets?', rule: 'secrets' },
  { q: 'Is it allowed to disable the failing test to get the build green?', rule: 'failing tests' },
];

const RULES: [string, string][] = [
  ['production deploys', 'only Tuesday to Thursday, after the on-call lead approves'],
  ['main branch', 'never force push; open a pull request'],
  ['new dependencies', 'need a review of licence and size before they are added'],
  ['database migrations', 'run only through the migration job, never by hand on shared databases'],
  ['api keys', 'are rotated by the platform team; ask in #platform first'],
  ['public api', 'changes need approval from two maintainers'],
  ['secrets', 'never committed; use the vault and .env.example'],
  ['failing tests', 'are fixed or quarantined with an issue, never silently disabled'],
];

export async function runContextSection(ctx: BenchContext): Promise<void> {
  const factCount = ctx.arg('facts', 50_000);
  const noteCount = ctx.arg('notes', 20_000);
  const rounds = ctx.arg('context-rounds', 5);
  const home = path.join(ctx.tmp, 'context');
  progress(`context: bulk-loading ${factCount} facts (+${factCount} superseded) and ${noteCount} notes through the memory appliers`);
  const vocab = loadVocabulary(defaultFixturesDir(), new Rng(ctx.seed));
  const gen = messageGenerator(vocab, new Rng(ctx.seed + 60));
  const s = await openServices({ home, wasmPath: ctx.wasm });
  try {
    const t0 = nowMs();
    const notes = { *[Symbol.iterator]() { for (let i = 0; i < noteCount; i++) yield gen.next(); } };
    const rng = new Rng(ctx.seed + 61);
    const counts = bulkLoad(s.store.db, notes, noteCount, factCount, vocab.words.slice(100, 4000), rng, (d) => { if (d % 20_000 === 0) progress(`  bulk insert ${d}`); });
    const rules = loadRules(s.store.db, rng, vocab.words.slice(100, 4000), ctx.arg('rules', 200));
    const loadMs = nowMs() - t0;
    // Semantic recall is on (the bench runs from dist/, beside the bundled model): every memory gets a vector.
    const sampleSize = ctx.arg('embed-sample', 400);
    progress(`context: embedding a sample of ${sampleSize} memories with the bundled model, the rest get mixed vectors (bench/benchVectors.ts)`);
    const vectors = s.semantic.configured ? await addBenchVectors(s, ctx.wasm, sampleSize, new Rng(ctx.seed + 62)) : undefined;
    // Measured on a checkpointed store, as every store is once its process has started again: a
    // chunk the bounded cache dropped is then decompressed from the snapshot again, not read raw
    // from the spill file the bulk load left it in.
    s.store.checkpoint();
    gc();

    // Warm the tokenizer and the page cache once, outside the measurements (section 2 times cold open).
    await getContextTool.run({ query: 'warm up' }, s, { client: 'bench' });
    const all = [...QUERIES.map((q) => ({ q, rule: undefined as string | undefined })), ...PERMISSION_QUESTIONS.map((p) => ({ q: p.q, rule: p.rule }))];
    progress(`context: ${all.length} requests × ${rounds} rounds at max_tokens 800, then every request at 128 and 4,000`);
    const times = new Map<string, number[]>(all.map((a) => [a.q, []]));
    const first: number[] = [];
    // This process's CPU time per call (this thread and the model's worker): the work, which other agents' load does not add to.
    const cpu: number[] = [];
    const firstReply = new Map<string, string>();
    const changed: string[] = [];
    let secondReply: { q: string; first: string; second: string } | undefined;
    let worst = { used: 0, budget: 1, counted: 0, q: '' };
    let over = 0;
    let mismatched = 0;
    let replies = 0;
    const check = (q: string, budget: number, reply: object) => {
      replies++;
      const counted = countTokens(JSON.stringify(reply));
      const used = (reply as { budget?: { used?: number } }).budget?.used ?? NaN;
      if (counted > budget) over++;
      if (counted !== used) mismatched++;
      if (counted / budget > worst.counted / worst.budget) worst = { used, budget, counted, q };
    };
    const ruleHits: { q: string; rulesFirst: boolean; firstIsRule: boolean; expected: boolean; ms: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const a of all) {
        const c = process.cpuUsage();
        const t = nowMs();
        const reply = await getContextTool.run({ query: a.q }, s, { client: 'bench' });
        const dt = nowMs() - t;
        const used = process.cpuUsage(c);
        cpu.push((used.user + used.system) / 1000);
        times.get(a.q)!.push(dt);
        if (r === 0) first.push(dt);
        if (r === 0) firstReply.set(a.q, JSON.stringify(reply));
        else if (r === 1 && firstReply.get(a.q) !== JSON.stringify(reply)) {
          changed.push(a.q);
          if (ctx.diag && changed.length === 1) secondReply = { q: a.q, first: firstReply.get(a.q) as string, second: JSON.stringify(reply) };
        }
        check(a.q, 800, reply);
        if (r === 0 && a.rule) {
          const facts = ((reply as { facts?: { subject?: string; predicate?: string }[] }).facts ?? []);
          ruleHits.push({
            q: a.q,
            rulesFirst: (reply as { rules_first?: boolean }).rules_first === true,
            firstIsRule: /^(rule|policy|approval|permission)/i.test(facts[0]?.predicate ?? ''),
            expected: facts.some((f) => f.subject === a.rule),
            ms: dt,
          });
        }
      }
    }
    const budgets: Record<number, number[]> = { 128: [], 4000: [] };
    for (const budget of [128, 4000]) {
      for (const a of all) {
        const t = nowMs();
        const reply = await getContextTool.run({ query: a.q, max_tokens: budget }, s, { client: 'bench' });
        budgets[budget]!.push(nowMs() - t);
        check(a.q, budget, reply);
      }
      const t = nowMs();
      check('(profile, no query)', budget, await getContextTool.run({ max_tokens: budget }, s, { client: 'bench' }));
      budgets[budget]!.push(nowMs() - t);
    }

    const pooled = [...times.values()].flat();
    const warm = [...times.values()].flatMap((v) => v.slice(1));
    const p95 = percentile(pooled, 95);
    heading(`6. get_context at ${counts.facts.toLocaleString('en-US')} facts (+${counts.supersededFacts.toLocaleString('en-US')} superseded) + ${counts.notes.toLocaleString('en-US')} notes + ${rules} rules`);
    note(`bulk-loaded through the memory appliers in ${ms(loadMs)} (one transaction, no journal lines; bench/bulkLoad.ts), the store open in this process.`);
    printVectors(vectors);
    note(`${all.length} requests (${QUERIES.length} tasks, ${PERMISSION_QUESTIONS.length} "may I …?" questions) through the get_context tool, max_tokens 800 (default), ${rounds} rounds; round 1 has cold per-process caches (token counts, word counts).`);
    table(
      ['request', 'p50', 'max', 'first call'],
      all.map((a) => {
        const v = times.get(a.q)!;
        return [a.q.length > 60 ? `${a.q.slice(0, 59)}…` : a.q, ms(median(v)), ms(Math.max(...v)), ms(v[0] ?? NaN)];
      }),
    );
    console.log('');
    result('get_context p50 / p95 / max, all calls', `${ms(median(pooled))} / ${ms(p95)} / ${ms(Math.max(...pooled))}`, 'p95 ≤ 30 ms', p95 <= 30);
    result('  CPU time per call (main thread + model worker) p50 / p95', `${ms(median(cpu))} / ${ms(percentile(cpu, 95))}`);
    result('  first round only (cold caches) p50 / p95', `${ms(median(first))} / ${ms(percentile(first, 95))}`);
    result('  later rounds (warm caches) p50 / p95', `${ms(median(warm))} / ${ms(percentile(warm, 95))}`);
    result('  max_tokens 128 p50 / p95', `${ms(median(budgets[128]!))} / ${ms(percentile(budgets[128]!, 95))}`);
    result('  max_tokens 4000 p50 / p95', `${ms(median(budgets[4000]!))} / ${ms(percentile(budgets[4000]!, 95))}`);
    result('replies over budget (countTokens of the JSON)', `${over} of ${replies}`, '0', over === 0);
    result('largest share of the budget used', `${worst.counted}/${worst.budget} tokens (${((worst.counted / worst.budget) * 100).toFixed(1)}%)`);
    note(`that reply: "${worst.q}"; the reply's own budget.used said ${worst.used}. Replies whose budget.used differs from countTokens of the JSON: ${mismatched}.`);
    result('replies that differ between the 1st and 2nd call', `${changed.length} of ${all.length}`, '0 (same store, same request)', changed.length === 0);
    if (changed.length) note(`e.g. ${changed.slice(0, 3).map((q) => `"${q}"`).join(', ')}`);
    if (secondReply) {
      const sum = (json: string) => {
        const r = JSON.parse(json) as { facts?: { id?: string }[]; notes?: { id?: string }[]; left_out?: object; budget?: { used?: number } };
        return `facts ${r.facts?.length ?? 0} [${(r.facts ?? []).slice(0, 4).map((f) => f.id).join(' ')}…], notes ${r.notes?.length ?? 0} [${(r.notes ?? []).slice(0, 3).map((n) => n.id).join(' ')}…], left_out ${JSON.stringify(r.left_out)}, used ${r.budget?.used}`;
      };
      note(`diag, "${secondReply.q}": 1st call ${sum(secondReply.first)}`);
      note(`diag, "${secondReply.q}": 2nd call ${sum(secondReply.second)}`);
    }
    const rf = ruleHits.filter((h) => h.rulesFirst).length;
    const fr = ruleHits.filter((h) => h.firstIsRule).length;
    const ex = ruleHits.filter((h) => h.expected).length;
    result('permission questions answered rules-first', `${rf}/${ruleHits.length}`, 'all', rf === ruleHits.length);
    result('  first fact is a rule / the expected rule present', `${fr}/${ruleHits.length} / ${ex}/${ruleHits.length}`);
    const missing = ruleHits.filter((h) => !h.expected).map((h) => `"${h.q}"`);
    if (missing.length) note(`the expected rule was not among the facts for ${missing.join(', ')}`);
    if (vectors) await semanticParts(s, ctx, all.map((a) => a.q));
    ctx.verdicts.push(['get_context p95 ≤ 30 ms', p95 <= 30], ['get_context never over max_tokens', over === 0], ['permission questions get rules first', rf === ruleHits.length]);
    if (ctx.diag) {
      heading('diagnosis: get_context, one more round of every request at max_tokens 800 under the CPU profiler');
      const { profile } = await profiled(async () => {
        for (const a of all) await getContextTool.run({ query: a.q }, s, { client: 'bench' });
      });
      printSelfTime(profile);
      printNativeCallers(profile);
      console.log('');
      note('the same round again, time inside SQLite per statement:');
      const sql = sqlProfile(s.store.db);
      try {
        for (const a of all) await getContextTool.run({ query: a.q }, s, { client: 'bench' });
      } finally {
        sql.stop();
      }
      sql.print();
    }
  } finally {
    s.store.close();
  }
}

/**
 * The two semantic steps of a get_context call on their own (the query's embedding in the
 * worker, the ranking of every memory's vector on this thread), and how far the ranking's
 * pass by sign agrees with an exact scan of every vector.
 */
async function semanticParts(s: Services, ctx: BenchContext, queries: readonly string[]): Promise<void> {
  const embedMs: number[] = [];
  const rankMs: number[] = [];
  let same = 0;
  let shared = 0;
  let total = 0;
  const exact = new SemanticService(s.store, semanticConfigFrom(process.env, {}, path.dirname(ctx.wasm)), { coarseFrom: Number.MAX_SAFE_INTEGER, rescore: 0 });
  // As many as get_context takes.
  const k = SEMANTIC_CANDIDATES;
  try {
    for (const q of queries) {
      let t = nowMs();
      const v = await s.semantic.embedQuery(`${q} (again)`);
      embedMs.push(nowMs() - t);
      if ('error' in v) throw new Error(v.error);
      t = nowMs();
      const got = s.semantic.rank(v, { corpus: 'memory', k });
      rankMs.push(nowMs() - t);
      const want = exact.rank(v, { corpus: 'memory', k });
      const keys = new Set(want.map((h) => h.key));
      shared += got.filter((h) => keys.has(h.key)).length;
      total += want.length;
      if (JSON.stringify(got) === JSON.stringify(want)) same++;
    }
  } finally {
    exact.close();
  }
  result('  query embedding alone p50 / p95', `${ms(median(embedMs))} / ${ms(percentile(embedMs, 95))}`);
  result(`  ranking ${k} by meaning alone p50 / p95`, `${ms(median(rankMs))} / ${ms(percentile(rankMs, 95))}`);
  result(`  the ${k} ranked vs an exact scan of every vector`, `${((shared / total) * 100).toFixed(1)}% shared, ${same}/${queries.length} identical`);
}

function printVectors(v: VectorFigures | undefined): void {
  if (!v) {
    note('semantic recall is off here (the bundled model is not beside the bench): the figures below are keyword ranking only');
    return;
  }
  const rate = v.sample / (v.embedMs / 1000);
  note(`vectors: ${v.total.toLocaleString('en-US')} memories ranked by meaning in every call below; ${v.sample} of them embedded by the bundled model for real, the rest mixed from those (bench/benchVectors.ts).`);
  result('embedding throughput (bundled model, 16 a batch)', `${rate.toFixed(1)} texts/s`);
  note(`${v.sample} memories spread over the store, ${Math.round(v.sampleChars / v.sample)} characters on average (as embedded: at most 1,200), in ${ms(v.embedMs)}`);
  result('  time to index this store at that rate', ms((v.total / rate) * 1000));
  result('bytes a vector adds (blob file + journal + database)', `${Math.round(v.blobBytes / v.sample)} + ${Math.round(v.journalBytes / v.sample)} + ${Math.round(v.dbBytes / v.sample)} B`);
  const perVector = (v.blobBytes + v.journalBytes + v.dbBytes) / v.sample;
  result('  all vectors of this store, against its database', `${((perVector * v.total) / 1048576).toFixed(1)} MB / ${(v.storeDbBytes / 1048576).toFixed(1)} MB`);
  note(`the mixed vectors took ${ms(v.mixMs)} to store (one transaction, no journal lines).`);
  note(`the model's products ran as ${v.simd ? 'wasm SIMD' : 'a JavaScript loop'}; the pass by sign ran as ${new SignTable(512).simd ? 'wasm SIMD' : 'a JavaScript loop'}.`);
}

/**
 * Standing rules (predicate "rule") among the facts: the eight the permission questions are
 * about, spread among `total` rules on other subjects, so rules-first has to pick, not just list.
 */
function loadRules(db: Parameters<typeof bulkLoad>[0], rng: Rng, words: readonly string[], total: number): number {
  const apply = memoryModule.appliers['memory.fact.saved'];
  if (!apply) throw new Error('the memory module no longer has the fact applier this bench drives');
  let at = Date.parse('2025-06-01T00:00:00Z');
  let n = 0;
  db.exec('BEGIN');
  try {
    const others = Math.max(0, total - RULES.length);
    const list: [string, string][] = Array.from({ length: others }, () => [`${rng.pick(words)} ${rng.pick(words)}`, `${rng.pick(words)} ${rng.pick(words)} ${rng.pick(words)} only`]);
    for (const [i, r] of RULES.entries()) list.splice(Math.floor(((i + 0.5) * list.length) / RULES.length) + i, 0, r);
    for (const [subject, object] of list) {
      at += rng.int(1, 12) * 3_600_000;
      const fact: FactSaved = { op: 'memory.fact.saved', at, id: `${at.toString(36)}${rng.hex(10)}`, subject, predicate: 'rule', object, scope: 'global', source: 'bench', statement: `Rule: ${subject} ${object}.`, cites: [] };
      apply(db, fact as Operation);
      n++;
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
  return n;
}
