import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { replaceFileDurably } from './durableFile';

/**
 * Content-addressed files for large payloads (tool outputs, artifacts, raw imported lines), so
 * the in-memory database stays a small index. A blob is durable before its hash is returned,
 * so a journal line that names it never points at nothing.
 */
export class BlobStore {
  constructor(private readonly root: string) {
    fs.mkdirSync(root, { recursive: true });
  }

  put(content: string | Uint8Array): string {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const hash = createHash('sha256').update(bytes).digest('hex');
    const file = this.pathOf(hash);
    if (fs.existsSync(file)) return hash;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    replaceFileDurably(file, bytes);
    return hash;
  }

  get(hash: string): Buffer | undefined {
    if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
    try {
      return fs.readFileSync(this.pathOf(hash));
    } catch {
      return undefined;
    }
  }

  has(hash: string): boolean {
    return /^[0-9a-f]{64}$/.test(hash) && fs.existsSync(this.pathOf(hash));
  }

  /** Where a blob lives on disk (lcm_describe reports it as a stored file's path). */
  pathOf(hash: string): string {
    return path.join(this.root, hash.slice(0, 2), hash);
  }
}
