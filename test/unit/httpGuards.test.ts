import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bearerMatches, hostAllowed, originAllowed } from '../../src/cli/httpGuards';
import { ensureToken, TOKEN_FILE } from '../../src/cli/httpToken';
import { tempHome } from './helpers/tempStore';

describe('HTTP guards of recollect serve', () => {
  it('accepts no Origin or a loopback one, and nothing else', () => {
    for (const ok of [undefined, 'http://127.0.0.1:7377', 'http://localhost', 'https://LOCALHOST:9', 'http://[::1]:7377', 'http://127.0.0.2']) expect(originAllowed(ok)).toBe(true);
    for (const bad of ['null', '', 'https://evil.example', 'http://localhost.evil.example', 'http://127.0.0.1.nip.io', 'file:///etc', 'vscode-webview://abc', 'http://192.168.1.5', 'http://0.0.0.0:7377']) {
      expect(originAllowed(bad)).toBe(false);
    }
  });

  it('accepts only a loopback Host (a rebound name arrives with its own host name)', () => {
    for (const ok of ['127.0.0.1:7377', 'localhost:7377', '[::1]:7377', 'localhost']) expect(hostAllowed(ok)).toBe(true);
    for (const bad of [undefined, '', 'evil.example:7377', '192.0.2.2:7377', 'localhost.evil.example']) expect(hostAllowed(bad)).toBe(false);
  });

  it('matches the bearer token exactly', () => {
    expect(bearerMatches('Bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('bearer abc', 'abc')).toBe(true);
    for (const bad of [undefined, '', 'abc', 'Basic abc', 'Bearer ab', 'Bearer abcd', 'Bearer abc extra']) expect(bearerMatches(bad, 'abc')).toBe(false);
  });

  it('creates the token file with mode 0600, reuses it, repairs a loose mode and replaces an unusable one', () => {
    const home = tempHome('token');
    const first = ensureToken(home);
    expect(first.file).toBe(path.join(home, TOKEN_FILE));
    expect(fs.statSync(first.file).mode & 0o777).toBe(0o600);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(ensureToken(home).token).toBe(first.token);
    fs.chmodSync(first.file, 0o644);
    expect(ensureToken(home).token).toBe(first.token);
    expect(fs.statSync(first.file).mode & 0o777).toBe(0o600);
    fs.writeFileSync(first.file, 'short\n');
    const replaced = ensureToken(home);
    expect(replaced.token).not.toBe(first.token);
    expect(replaced.token.length).toBeGreaterThanOrEqual(32);
  });
});
