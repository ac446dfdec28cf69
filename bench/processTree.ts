import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Resident memory of other processes and the processes they start, read from /proc (Linux):
 * VmRSS of every watched process every `everyMs`, and the processes whose parent is watched
 * (a compaction child, say) joined as they appear. The kernel keeps no children list here
 * (/proc/<pid>/task/<tid>/children needs CONFIG_PROC_CHILDREN), so new processes are found by
 * reading the parent of each process in /proc, less often than the memory is sampled.
 *
 * A sampler misses the last moments of a process that exits between two samples, so each
 * process is also asked for its own high-water mark (VmHWM) when it exits: see `exitPeakPreload`.
 */

export interface ProcessPeak {
  pid: number;
  ppid: number;
  /** The caller's name for a watched process, or `<parent's label> › <what it runs>` for a child found under it. */
  label: string;
  /** The script the process runs (its first argument after node), for telling children apart. */
  command: string;
  peakRss: number;
  /** Anonymous memory at the sampled peak (RssAnon): what the process itself holds, not the mapped files it shares. */
  peakAnon: number;
  /** The largest sampled Pss (/proc/<pid>/smaps_rollup): its resident pages, each shared one divided by the number of processes mapping it. */
  peakPss: number;
  /** The largest sampled RssAnon. */
  maxAnon: number;
  /** The kernel's high-water mark: the last VmHWM read while it ran, or the one it wrote itself at exit when larger. */
  hwm: number;
  samples: number;
  firstSeenMs: number;
  lastSeenMs: number;
  /** RSS at each sample, in bytes, with the time since the sampler started (for the timeline). */
  timeline: [number, number][];
}

interface Status {
  rss: number;
  anon: number;
  /** Resident pages of mapped files (the node binary and its libraries, shared by every node process) and shared memory. */
  file: number;
  shmem: number;
  hwm: number;
  pss: number;
}

/** Pss from smaps_rollup (Linux 4.14+), 0 where it cannot be read. */
function readPss(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function readStatus(pid: number): Status | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (key: string) => {
    const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(text);
    return m ? Number(m[1]) * 1024 : 0;
  };
  // A zombie has no memory lines: it is gone as far as memory goes.
  if (!/VmRSS:/.test(text)) return undefined;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), shmem: kb('RssShmem'), hwm: kb('VmHWM'), pss: readPss(pid) };
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces or parentheses itself.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = argv.slice(1).find((a) => !a.startsWith('-'));
    return script ? `${path.basename(script)}${argv.slice(argv.indexOf(script) + 1, argv.indexOf(script) + 2).map((a) => ` ${a}`).join('')}` : path.basename(argv[0] ?? '?');
  } catch {
    return '?';
  }
}

function environOf(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

export class ProcessTreeSampler {
  readonly peaks = new Map<number, ProcessPeak>();
  /** The largest sum of the RSS of the processes in each group seen at one sample. */
  readonly groupPeaks = new Map<string, number>();
  /** The largest sum of their Pss seen at one sample. */
  readonly groupPssPeaks = new Map<string, number>();
  /**
   * The largest memory the group held at one sample with shared pages counted once: the sum of
   * their anonymous and shared-memory pages, plus the largest one's file pages (every process
   * here maps the same node binary and libraries, and reads its scripts rather than mapping them).
   */
  readonly groupUniquePeaks = new Map<string, number>();
  private readonly groups = new Map<string, Set<number>>();
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;
  private readonly t0 = Date.now();
  /** Processes already looked at and not adopted, so their environment is read once. */
  private readonly passed = new Set<number>();

  /**
   * `adopt`: besides the watched processes' children, any process whose environment holds this
   * `NAME=value` entry (the store's RECOLLECT_HOME) is watched, in `adoptInto`'s groups: a
   * process the watched ones started detached (reparented to init) still works on the store.
   */
  constructor(private readonly adopt?: { env: string; into: string[] }, private readonly everyMs = 100, private readonly scanEvery = 5) {}

  start(): this {
    this.timer = setInterval(() => this.tick(), this.everyMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.tick();
  }

  /** Starts watching `pid` (and every process it starts) under `label`, counted in `groups`' totals. */
  watch(pid: number, label: string, groups: string[] = []): void {
    const known = this.peaks.get(pid);
    if (known) {
      // Found by a scan before the caller named it (adopted by its environment, or a child): the caller's name wins.
      const old = known.label;
      for (const p of this.tree(pid)) p.label = p === known ? label : p.label.replace(old, label);
    } else {
      this.add(pid, 0, label);
    }
    for (const g of groups) {
      const set = this.groups.get(g) ?? new Set<number>();
      set.add(pid);
      this.groups.set(g, set);
    }
    this.tick();
  }

  /** Joins what a process wrote about itself at exit (bytes of VmHWM), which a sampler can miss. */
  recordExitPeak(pid: number, hwm: number): void {
    const p = this.peaks.get(pid);
    if (p) p.hwm = Math.max(p.hwm, hwm);
  }

  /** Every process watched that was not found as a child of another watched one. */
  roots(): ProcessPeak[] {
    return [...this.peaks.values()].filter((p) => !this.peaks.has(p.ppid) || p.ppid === p.pid);
  }

  /** The largest RSS in each of `parts` equal slices of a process's life (its RSS over time, coarsely). */
  profile(pid: number, parts = 10): number[] {
    const t = this.peaks.get(pid)?.timeline ?? [];
    if (!t.length) return [];
    const [from, to] = [t[0]?.[0] ?? 0, t.at(-1)?.[0] ?? 0];
    const out = new Array<number>(parts).fill(0);
    for (const [at, rss] of t) {
      const i = Math.min(parts - 1, Math.floor(((at - from) / Math.max(1, to - from)) * parts));
      out[i] = Math.max(out[i] as number, rss);
    }
    return out;
  }

  /** A process and everything found under it. */
  tree(pid: number): ProcessPeak[] {
    const out: ProcessPeak[] = [];
    const stack = [pid];
    while (stack.length) {
      const p = this.peaks.get(stack.pop() as number);
      if (!p) continue;
      out.push(p);
      for (const c of this.peaks.values()) if (c.ppid === p.pid && c.pid !== p.pid) stack.push(c.pid);
    }
    return out;
  }

  private add(pid: number, ppid: number, label: string): void {
    if (this.peaks.has(pid)) return;
    this.peaks.set(pid, { pid, ppid, label, command: commandOf(pid), peakRss: 0, peakAnon: 0, peakPss: 0, maxAnon: 0, hwm: 0, samples: 0, firstSeenMs: Date.now() - this.t0, lastSeenMs: 0, timeline: [] });
  }

  private tick(): void {
    if (this.ticks++ % this.scanEvery === 0) this.findChildren();
    const now = Date.now() - this.t0;
    const statusNow = new Map<number, Status>();
    for (const p of this.peaks.values()) {
      const s = readStatus(p.pid);
      if (!s) continue;
      p.samples++;
      p.lastSeenMs = now;
      if (s.rss > p.peakRss) {
        p.peakRss = s.rss;
        p.peakAnon = s.anon;
      }
      p.hwm = Math.max(p.hwm, s.hwm);
      p.peakPss = Math.max(p.peakPss, s.pss);
      p.maxAnon = Math.max(p.maxAnon, s.anon);
      p.timeline.push([now, s.rss]);
      statusNow.set(p.pid, s);
    }
    for (const [g, roots] of this.groups) {
      let rss = 0;
      let pss = 0;
      let own = 0;
      let file = 0;
      for (const root of roots) {
        for (const p of this.tree(root)) {
          const s = statusNow.get(p.pid);
          if (!s) continue;
          rss += s.rss;
          pss += s.pss;
          own += s.anon + s.shmem;
          file = Math.max(file, s.file);
        }
      }
      const peak = (m: Map<string, number>, v: number) => m.set(g, Math.max(m.get(g) ?? 0, v));
      peak(this.groupPeaks, rss);
      peak(this.groupPssPeaks, pss);
      peak(this.groupUniquePeaks, own + file);
    }
  }

  private findChildren(): void {
    let entries: string[];
    try {
      entries = fs.readdirSync('/proc');
    } catch {
      return;
    }
    for (const e of entries) {
      const pid = Number(e);
      if (!Number.isInteger(pid) || this.peaks.has(pid) || this.passed.has(pid)) continue;
      const ppid = parentOf(pid);
      if (ppid === undefined) continue;
      const parent = this.peaks.get(ppid);
      if (parent) {
        this.add(pid, ppid, `${parent.label} › ${commandOf(pid)}`);
      } else if (this.adopt && environOf(pid).includes(this.adopt.env)) {
        this.add(pid, ppid, `${commandOf(pid)} (not a child of a watched process; found by ${this.adopt.env.slice(0, this.adopt.env.indexOf('='))})`);
        for (const g of this.adopt.into) this.groups.get(g)?.add(pid);
      } else {
        this.passed.add(pid);
      }
    }
  }
}

/**
 * A file for `NODE_OPTIONS=--require <file>`: every node process started under it (and the
 * processes those fork: NODE_OPTIONS is inherited) appends its pid and its own VmHWM to
 * `outFile` as it exits normally, so a short process's peak is the kernel's, not the nearest sample.
 * Written at run time because the bench is one bundle; it is plain CommonJS with no imports of ours.
 */
export function exitPeakPreload(dir: string): { preload: string; outFile: string } {
  const preload = path.join(dir, 'exit-peak.cjs');
  const outFile = path.join(dir, 'exit-peaks.jsonl');
  fs.writeFileSync(
    preload,
    `'use strict';
const fs = require('node:fs');
process.on('exit', () => {
  try {
    const m = /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) fs.appendFileSync(${JSON.stringify(outFile)}, JSON.stringify({ pid: process.pid, ppid: process.ppid, hwm: Number(m[1]) * 1024 }) + '\\n');
  } catch {}
});
`,
  );
  return { preload, outFile };
}

/** Reads the exit peaks written so far into the sampler. */
export function joinExitPeaks(sampler: ProcessTreeSampler, outFile: string): void {
  if (!fs.existsSync(outFile)) return;
  for (const line of fs.readFileSync(outFile, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { pid: number; hwm: number };
    sampler.recordExitPeak(r.pid, r.hwm);
  }
}
