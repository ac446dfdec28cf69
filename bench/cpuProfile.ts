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
