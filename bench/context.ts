/** What every section of the benchmark is handed: where to work, what was asked for, and where verdicts go. */

export const SECTIONS = ['remember', 'open', 'search', 'import', 'lcm', 'context', 'pool', 'scale'] as const;
export type Section = (typeof SECTIONS)[number];
/** What runs without --only: the scale section imports gigabytes (an hour or more at its default 5 GB), so it runs only when named. */
const DEFAULT_SECTIONS: readonly Section[] = SECTIONS.filter((s) => s !== 'scale');

export interface BenchContext {
  /** The run's temp folder (removed at the end unless --keep or --reuse). */
  tmp: string;
  /** --reuse <dir>: an earlier --keep run's folder, whose stores may be reused (diagnosis only). */
  reuse: string | undefined;
  wasm: string;
  seed: number;
  /** dist/bench.js itself, for measurements that need a fresh process. */
  script: string;
  diag: boolean;
  want(section: Section): boolean;
  arg(name: string, fallback: number): number;
  /** Every goal's verdict, for the summary at the end. */
  verdicts: [string, boolean][];
}

/** `--only import,lcm` → those sections; no --only → all but scale. Unknown names are an error, not silently nothing. */
export function parseSections(argv: readonly string[]): Set<Section> {
  const i = argv.indexOf('--only');
  if (i < 0) return new Set(DEFAULT_SECTIONS);
  const names = (argv[i + 1] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(SECTIONS as readonly string[]).includes(n));
  if (!names.length || unknown.length) {
    throw new Error(`--only takes a comma-separated list of ${SECTIONS.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
  }
  return new Set(names as Section[]);
}
