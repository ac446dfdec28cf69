/** Percentiles, timers and the labelled result lines the benchmark prints. */

export function percentile(samples: readonly number[], p: number): number {
  if (!samples.length) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  // Nearest-rank: p99 of 1,000 samples is the 990th smallest.
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

export function mean(samples: readonly number[]): number {
  return samples.reduce((a, b) => a + b, 0) / (samples.length || 1);
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function timeSync<T>(fn: () => T): [T, number] {
  const t0 = nowMs();
  const out = fn();
  return [out, nowMs() - t0];
}

export function ms(v: number): string {
  if (!Number.isFinite(v)) return 'n/a';
  if (v >= 1000) return `${(v / 1000).toFixed(2)} s`;
  if (v >= 100) return `${v.toFixed(0)} ms`;
  if (v >= 10) return `${v.toFixed(1)} ms`;
  return `${v.toFixed(2)} ms`;
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function ratio(v: number): string {
  return Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a';
}

export function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}

const started = nowMs();

/** Progress goes to stderr, so stdout holds only the figures. */
export function progress(message: string): void {
  const t = ((nowMs() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[${t}s] ${message}\n`);
}

export function heading(title: string): void {
  console.log(`\n=== ${title} ${'='.repeat(Math.max(3, 76 - title.length))}`);
}

/** One figure with its goal and verdict, aligned. */
export function result(label: string, figure: string, goal?: string, ok?: boolean): void {
  const tail = goal === undefined ? '' : `   goal ${goal}${ok === undefined ? '' : `   ${verdict(ok)}`}`;
  console.log(`  ${label.padEnd(46)} ${figure.padStart(22)}${tail}`);
}

export function note(text: string): void {
  console.log(`  · ${text}`);
}

export function table(headers: string[], rows: (string | number)[][]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  const line = (cells: (string | number)[]) =>
    '  ' + cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i] as number) : String(c).padStart(widths[i] as number))).join('  ');
  console.log(line(headers));
  console.log('  ' + widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}
