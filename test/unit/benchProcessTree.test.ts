import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exitPeakPreload, joinExitPeaks, ProcessTreeSampler } from '../../bench/processTree';

const MiB = 1024 * 1024;
const linux = process.platform === 'linux';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A node process that holds `mb` MB of touched memory for `holdMs`, after starting `child` (a script) if given. */
function script(mb: number, holdMs: number, child?: string): string {
  return `
    const kept = Buffer.alloc(${mb} * 1024 * 1024, 1);
    ${child ? `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: 'ignore' }).on('exit', () => process.exit(0));` : ''}
    setTimeout(() => kept.length, ${holdMs});
  `;
}

describe.runIf(linux)('bench ProcessTreeSampler (real processes, /proc)', () => {
  it('finds a watched process\'s child by its parent pid and sees each one\'s own peak', async () => {
    const sampler = new ProcessTreeSampler(undefined, 50, 1).start();
    const parent = spawn(process.execPath, ['-e', script(60, 400, script(150, 1500))], { stdio: 'ignore' });
    sampler.watch(parent.pid as number, 'parent', ['all']);
    await new Promise((r) => parent.once('exit', r));
    sampler.stop();
    const tree = sampler.tree(parent.pid as number);
    expect(tree).toHaveLength(2);
    const [p, c] = tree;
    expect(c?.ppid).toBe(parent.pid);
    expect(c?.label).toMatch(/^parent › /);
    expect(p?.peakRss).toBeGreaterThan(60 * MiB);
    expect(p?.peakRss).toBeLessThan(150 * MiB);
    expect(c?.peakRss).toBeGreaterThan(150 * MiB);
    // Both were alive at once: the group's peak is their sum at one sample, more than either alone.
    expect(sampler.groupPeaks.get('all')).toBeGreaterThan((c?.peakRss ?? 0) + 60 * MiB * 0.9);
  });

  it('adopts a process that is no child of a watched one by the environment entry it carries', async () => {
    const tag = `RECOLLECT_HOME=/tmp/scale-test-${process.pid}-${Date.now()}`;
    const sampler = new ProcessTreeSampler({ env: tag, into: ['all'] }, 50, 1).start();
    const [name, value] = [tag.slice(0, tag.indexOf('=')), tag.slice(tag.indexOf('=') + 1)];
    const stranger = spawn(process.execPath, ['-e', script(80, 1200)], { stdio: 'ignore', env: { ...process.env, [name]: value } });
    const unrelated = spawn(process.execPath, ['-e', script(10, 1200)], { stdio: 'ignore' });
    await Promise.all([stranger, unrelated].map((p) => new Promise((r) => p.once('exit', r))));
    sampler.stop();
    const adopted = sampler.peaks.get(stranger.pid as number);
    expect(adopted?.label).toMatch(/found by RECOLLECT_HOME/);
    expect(adopted?.peakRss).toBeGreaterThan(80 * MiB);
    expect(sampler.peaks.has(unrelated.pid as number)).toBe(false);
  });

  it('keeps the caller\'s name for a process a scan adopted before the caller watched it', async () => {
    const tag = `RECOLLECT_HOME=/tmp/scale-test-${process.pid}-${Date.now()}-named`;
    const sampler = new ProcessTreeSampler({ env: tag, into: ['all'] }, 50, 1).start();
    const [name, value] = [tag.slice(0, tag.indexOf('=')), tag.slice(tag.indexOf('=') + 1)];
    const proc = spawn(process.execPath, ['-e', script(20, 800)], { stdio: 'ignore', env: { ...process.env, [name]: value } });
    const exited = new Promise((r) => proc.once('exit', r));
    // As an MCP client's connect does: the process runs a while before its pid is handed over.
    await new Promise((r) => setTimeout(r, 300));
    expect(sampler.peaks.get(proc.pid as number)?.label).toMatch(/found by RECOLLECT_HOME/);
    sampler.watch(proc.pid as number, 'recollect mcp #1', ['all']);
    await exited;
    sampler.stop();
    expect(sampler.peaks.get(proc.pid as number)?.label).toBe('recollect mcp #1');
  });

  it('joins the high-water mark a process writes at exit through the preload, which no sample saw', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recollect-proctree-'));
    dirs.push(dir);
    const { preload, outFile } = exitPeakPreload(dir);
    // Far slower sampling than the burst: only the process's own VmHWM at exit can show it.
    const sampler = new ProcessTreeSampler(undefined, 60_000, 1).start();
    const burst = spawn(process.execPath, ['-e', `setTimeout(() => { Buffer.alloc(120 * 1024 * 1024, 1); }, 300)`], { stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: `--require ${preload}` } });
    sampler.watch(burst.pid as number, 'burst');
    await new Promise((r) => burst.once('exit', r));
    sampler.stop();
    const before = sampler.peaks.get(burst.pid as number);
    expect(Math.max(before?.peakRss ?? 0, before?.hwm ?? 0)).toBeLessThan(120 * MiB);
    joinExitPeaks(sampler, outFile);
    expect(sampler.peaks.get(burst.pid as number)?.hwm).toBeGreaterThan(120 * MiB);
  });
});
