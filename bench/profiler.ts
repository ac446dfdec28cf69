import { nowMs } from './stats';

/**
 * Exclusive time per labelled frame: a frame's time minus the time of the frames it called.
 * Wraps methods on live objects (the store, the importer, node:fs), so it only works for code
 * that calls them one at a time — an import awaits each file in turn, which is what it is for.
 */
export class Profiler {
  private readonly stack: { name: string; start: number; child: number }[] = [];
  readonly totals = new Map<string, { ms: number; calls: number }>();

  enter(name: string): void {
    this.stack.push({ name, start: nowMs(), child: 0 });
  }

  exit(): void {
    const f = this.stack.pop();
    if (!f) return;
    const dt = nowMs() - f.start;
    const t = this.totals.get(f.name) ?? { ms: 0, calls: 0 };
    t.ms += dt - f.child;
    t.calls++;
    this.totals.set(f.name, t);
    const parent = this.stack.at(-1);
    if (parent) parent.child += dt;
  }

  /** The label of the innermost open frame (so one wrapper can say who called it). */
  get current(): string | undefined {
    return this.stack.at(-1)?.name;
  }

  wrapSync<O extends object>(obj: O, key: string, name: string | (() => string)): void {
    const target = obj as unknown as Record<string, (...args: unknown[]) => unknown>;
    const orig = target[key];
    if (typeof orig !== 'function') throw new Error(`profiler: ${key} is not a method`);
    const label = typeof name === 'string' ? () => name : name;
    target[key] = (...args: unknown[]) => {
      this.enter(label());
      try {
        return orig.apply(obj, args);
      } finally {
        this.exit();
      }
    };
  }

  wrapAsync<O extends object>(obj: O, key: string, name: string): void {
    const target = obj as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const orig = target[key];
    if (typeof orig !== 'function') throw new Error(`profiler: ${key} is not a method`);
    target[key] = async (...args: unknown[]) => {
      this.enter(name);
      try {
        return await orig.apply(obj, args);
      } finally {
        this.exit();
      }
    };
  }

  /** Totals as plain data (for a child process to hand to its parent). */
  toJSON(): Record<string, { ms: number; calls: number }> {
    return Object.fromEntries([...this.totals].map(([k, v]) => [k, { ...v }]));
  }
}
