import { Session } from 'node:inspector';
import { table } from './stats';

/**
 * --diag: V8's sampling profiler around a piece of the benchmark, summarised as self time per
 * function (the bundle is not minified, so the names are the source's). sql.js's wasm shows as
 * numbered wasm functions; they are summed into one line.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export async function profiled<T>(fn: () => Promise<T>): Promise<{ result: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  try {
    const result = await fn();
    const { profile } = (await post('Profiler.stop')) as { profile: CpuProfile };
    return { result, profile };
  } finally {
    session.disconnect();
  }
}

/** Prints the functions with the most self time. */
export function printSelfTime(profile: CpuProfile, top = 18): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const n = byId.get(id);
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    if (!n) return;
    const { functionName, url, lineNumber } = n.callFrame;
    const file = url.split('/').pop() ?? '';
    const key = /wasm/.test(url) || /^\$?func\d+|wasm-function/.test(functionName) ? '(sql.js wasm: SQLite itself)' : `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  table(['function (self time)', 'ms', 'share'], rows.map(([k, v]) => [k.length > 90 ? `${k.slice(0, 89)}…` : k, v.toFixed(1), `${((v / total) * 100).toFixed(1)}%`]));
}

/**
 * For the functions with the most self time that have no source of their own (the runtime's
 * `read`, a port's `dispatch`), the chains of callers that spent it: a native name alone does
 * not say which part of Recollect called it.
 */
export function printNativeCallers(profile: CpuProfile, top = 3, depth = 4): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').pop() ?? ''}:${n.callFrame.lineNumber + 1}`;
  const chains = new Map<string, Map<string, number>>();
  profile.samples.forEach((id, i) => {
    const n = byId.get(id);
    if (!n || n.callFrame.url || /^\(|wasm/.test(n.callFrame.functionName)) return;
    const up: string[] = [];
    for (let p = parent.get(id); p !== undefined && up.length < depth; p = parent.get(p)) up.push(name(byId.get(p) as ProfileNode));
    const per = chains.get(n.callFrame.functionName) ?? new Map<string, number>();
    const key = up.join(' ← ');
    per.set(key, (per.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
    chains.set(n.callFrame.functionName, per);
  });
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  for (const [fn, per] of [...chains.entries()].sort((a, b) => total(b[1]) - total(a[1])).slice(0, top)) {
    table([`callers of ${fn} (${total(per).toFixed(1)} ms)`, 'ms'], [...per.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, v]) => [k.length > 140 ? `${k.slice(0, 139)}…` : k, v.toFixed(1)]));
  }
}
