import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const TOKEN_FILE = 'mcp-http-token';
const TOKEN_MIN_CHARS = 32;

/**
 * The bearer token of `recollect serve`, kept in the store home readable by its owner only.
 * It is reused across restarts so configured clients keep working; delete the file to rotate
 * it. Two servers starting at once agree: the file is created exclusively and the loser reads it.
 */
export function ensureToken(home: string): { token: string; file: string } {
  const file = path.join(home, TOKEN_FILE);
  fs.mkdirSync(home, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    const existing = readToken(file);
    if (existing) {
      // A copied or restored file may have lost its mode; the token is a password.
      if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
      return { token: existing, file };
    }
    if (fs.existsSync(file)) fs.rmSync(file); // empty or too short: not a usable secret
    const token = randomBytes(32).toString('base64url');
    try {
      fs.writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
      return { token, file };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`could not create the token file ${file}`);
}

function readToken(file: string): string | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return text.length >= TOKEN_MIN_CHARS && /^\S+$/.test(text) ? text : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
