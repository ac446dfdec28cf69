import { spawn } from 'node:child_process';
import * as os from 'node:os';
import { RETURNING_MALLOC_ENV } from '../core/store/memoryBudget';

/**
 * `recollect import` started from a shell: the one bulk write a person runs by hand, and the
 * process whose peak malloc's default behaviour decides (memoryBudget.ts RETURNING_MALLOC_ENV).
 * The setting only takes effect at a process's start, so the command runs again in a child that
 * has it, and this process only waits (a bare Node process, for the length of the import). Long-lived
 * commands are not relaunched: their launchers set it (the MCP configs Recollect writes).
 */
export function relaunchesForMalloc(command: string | undefined, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): boolean {
  return command === 'import' && platform === 'linux' && Object.keys(RETURNING_MALLOC_ENV).some((k) => env[k] === undefined);
}

/** Runs this CLI again with `argv` and the malloc setting; resolves to its exit code, or undefined when it could not start (the caller then runs the command itself). */
export function relaunchWithMalloc(argv: string[]): Promise<number | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, ...argv], { stdio: 'inherit', env: { ...process.env, ...RETURNING_MALLOC_ENV } });
    // Ctrl-C reaches both through the terminal; a `kill` of this process is passed on. Either way this one waits for the child to finish.
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    const done = (code: number | undefined) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code);
    };
    child.once('error', () => done(undefined));
    child.once('exit', (code, signal) => done(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0)));
  });
}
