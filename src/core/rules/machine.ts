import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeTempBeside } from '../store/durableFile';

/**
 * Which machine this process runs on, as rule approvals see it. Approvals are per machine so a
 * rule a person approved on one computer is not in force on another that shares the rules.
 * The ids live beside the store (whose home is per machine: ~/.recollect by default), so the
 * extension, the CLI and an MCP server started by another agent all agree. VS Code adopts its
 * own `vscode.env.machineId` at start; ids held before stay known, so approvals made under an
 * earlier id keep counting. RECOLLECT_MACHINE_ID overrides for tests and CI.
 */
export class MachineIdentity {
  constructor(
    private readonly file: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** Every id this machine has been known by, the current one first. */
  ids(): string[] {
    const fromEnv = this.env.RECOLLECT_MACHINE_ID?.trim();
    const stored = this.read();
    if (!stored.length && !fromEnv) {
      this.create(randomUUID());
      return this.read();
    }
    return fromEnv ? [fromEnv, ...stored.filter((id) => id !== fromEnv)] : stored;
  }

  current(): string {
    return this.ids()[0] as string;
  }

  /** Makes `id` the current id of this machine (VS Code's machine id), keeping the ones before. */
  adopt(id: string): void {
    const clean = id.trim();
    if (!clean) return;
    const stored = this.read();
    if (stored[0] === clean) return;
    this.write([clean, ...stored.filter((s) => s !== clean)]);
  }

  private read(): string[] {
    try {
      const data = JSON.parse(fs.readFileSync(this.file, 'utf8')) as { ids?: unknown };
      return Array.isArray(data.ids) ? data.ids.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : [];
    } catch {
      return [];
    }
  }

  /**
   * The first id, created exclusively: when two processes start at once, the first file wins and
   * both read it. The file appears whole or not at all (a temp file linked into place), since an
   * empty one left by a full disk would read as no id and could never be created again; one left
   * so by an earlier build is replaced.
   */
  private create(id: string): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = this.writeTemp([id]);
    try {
      fs.linkSync(tmp, this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!this.read().length) fs.renameSync(tmp, this.file);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }

  private write(ids: string[]): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = this.writeTemp(ids);
    try {
      fs.renameSync(tmp, this.file);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }

  /** A whole, synced temp file beside the ids' file; on a full disk nothing is left and the write is refused. */
  private writeTemp(ids: string[]): string {
    return writeTempBeside(this.file, Buffer.from(JSON.stringify({ ids }, null, 2) + '\n', 'utf8'));
  }
}
