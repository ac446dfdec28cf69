import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcpCommand } from '../../src/host/mcpCommand';
import { formatBytes, storeSizeOnDisk } from '../../src/host/storeSize';
import { tempHome } from './helpers/tempStore';

/** A stand-in for dist/cli.js that reports what it was started with. */
function fakeCli(dir: string): string {
  const cli = path.join(dir, "it's a cli.js");
  fs.writeFileSync(cli, 'process.stdout.write(JSON.stringify({ home: process.env.RECOLLECT_HOME, malloc: process.env.MALLOC_MMAP_THRESHOLD_, args: process.argv.slice(2) }));\n');
  return cli;
}

describe('the MCP command copied for other agents', () => {
  it('starts the CLI with RECOLLECT_HOME (and on Linux the malloc threshold) set when a POSIX shell runs it, even with spaces and quotes in the paths', () => {
    const dir = tempHome('mcp cmd');
    const home = path.join(dir, "my store's home");
    const line = mcpCommand('shell', { cli: fakeCli(dir), home, platform: 'linux' });
    // `node` on PATH is the one running this test, as it would be in a person's terminal.
    const out = execFileSync('sh', ['-c', line], { encoding: 'utf8', env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` } });
    expect(JSON.parse(out)).toEqual({ home, malloc: '131072', args: ['mcp'] });
  });

  it('writes the Claude Code line, the Codex TOML block and the JSON entry with the same command', () => {
    const launch = { cli: '/opt/ext/dist/cli.js', home: '/home/a/.recollect', platform: 'linux' as const };
    const env = 'RECOLLECT_HOME=/home/a/.recollect -e MALLOC_MMAP_THRESHOLD_=131072';
    expect(mcpCommand('claude', launch)).toBe(`claude mcp add recollect -e ${env} -- node /opt/ext/dist/cli.js mcp --name claude-code`);
    expect(mcpCommand('codex', launch)).toBe('[mcp_servers.recollect]\ncommand = "node"\nargs = ["/opt/ext/dist/cli.js", "mcp", "--name", "codex"]\nenv = { RECOLLECT_HOME = "/home/a/.recollect", MALLOC_MMAP_THRESHOLD_ = "131072" }');
    expect(JSON.parse(mcpCommand('json', launch))).toEqual({ mcpServers: { recollect: { command: 'node', args: ['/opt/ext/dist/cli.js', 'mcp'], env: { RECOLLECT_HOME: '/home/a/.recollect', MALLOC_MMAP_THRESHOLD_: '131072' } } } });
    // glibc's setting only where glibc is: macOS and Windows get RECOLLECT_HOME alone.
    expect(mcpCommand('claude', { ...launch, platform: 'darwin' })).toBe('claude mcp add recollect -e RECOLLECT_HOME=/home/a/.recollect -- node /opt/ext/dist/cli.js mcp --name claude-code');
    expect(mcpCommand('shell', { ...launch, home: 'C:\\Users\\a b\\.recollect', cli: 'C:\\ext\\dist\\cli.js', platform: 'win32' })).toBe('$env:RECOLLECT_HOME="C:\\Users\\a b\\.recollect"; node C:\\ext\\dist\\cli.js mcp');
  });
});

describe('store size on disk (status bar)', () => {
  it('adds up every file under the store home, nested folders included', async () => {
    const home = tempHome('size');
    fs.writeFileSync(path.join(home, 'journal.jsonl'), 'x'.repeat(1000));
    fs.mkdirSync(path.join(home, 'blobs', 'ab'), { recursive: true });
    fs.writeFileSync(path.join(home, 'blobs', 'ab', 'cdef'), Buffer.alloc(5000));
    fs.mkdirSync(path.join(home, 'vault', 'daily'), { recursive: true });
    fs.writeFileSync(path.join(home, 'vault', 'daily', '2026-01-01.md'), '- a note\n');
    expect(await storeSizeOnDisk(home)).toEqual({ bytes: 1000 + 5000 + 9, files: 3, partial: false });
    expect(await storeSizeOnDisk(path.join(home, 'missing'))).toEqual({ bytes: 0, files: 0, partial: false });
  });

  it('formats sizes for the status bar', () => {
    expect([0, 1023, 1024, 1536, 10 * 1024 * 1024, 3.5 * 1024 ** 3].map(formatBytes)).toEqual(['0 B', '1023 B', '1.0 KB', '1.5 KB', '10 MB', '3.5 GB']);
  });
});
