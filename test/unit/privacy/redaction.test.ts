import { generateKeyPairSync, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Redaction } from '../../../src/core/privacy/redaction';
import { redactionSettingsFrom } from '../../../src/core/privacy/redactionSettings';
import { openServices } from '../../../src/core/services';
import { callTool } from '../helpers/memoryCall';
import { tempHome, WASM_PATH } from '../helpers/tempStore';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function pick(alphabet: string, n: number): string {
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join('');
}
const awsKeyId = () => 'AKIA' + pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16);
const awsSecret = () => pick(ALNUM + '/+', 40);
const githubToken = () => 'ghp_' + pick(ALNUM, 36);
const pem = () => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString().trim();

describe('Redaction', () => {
  it('replaces an AWS key pair, a GitHub token, a PEM private key and a password with labelled placeholders', async () => {
    const id = awsKeyId();
    const secret = awsSecret();
    const token = githubToken();
    const key = pem();
    const r = new Redaction();
    const [a, b, c, d] = await r.texts([
      `export AWS_ACCESS_KEY_ID=${id}\nexport AWS_SECRET_ACCESS_KEY="${secret}"\n`,
      `git remote set-url origin https://x:${token}@github.com/o/r\nuse ${token} here`,
      `the deploy key:\n${key}\nkeep it safe`,
      'the staging database password: hunter2-Sup3r, do not share',
    ], 'global');
    expect(a).toBe('export AWS_ACCESS_KEY_ID=[redacted: AWS access key]\nexport AWS_SECRET_ACCESS_KEY="[redacted: AWS secret access key]"\n');
    expect(b).toBe('git remote set-url origin https://x:[redacted: GitHub token]@github.com/o/r\nuse [redacted: GitHub token] here');
    expect(c).toBe('the deploy key:\n[redacted: private key]\nkeep it safe');
    expect(d).toBe('the staging database password: [redacted: password], do not share');
  });

  it('an AWS secret access key ending in "/" or "+" is replaced too, in the forms it is written in', async () => {
    const r = new Redaction();
    const body = pick(ALNUM, 39);
    const texts = [
      `export AWS_SECRET_ACCESS_KEY="${body}/"`,
      `aws_secret_access_key = ${body}+`,
      `{"SecretAccessKey": "${body}/", "region": "eu-west-1"}`,
    ];
    expect(await r.texts(texts, 'global')).toEqual([
      'export AWS_SECRET_ACCESS_KEY="[redacted: AWS secret access key]"',
      'aws_secret_access_key = [redacted: AWS secret access key]',
      '{"SecretAccessKey": "[redacted: AWS secret access key]", "region": "eu-west-1"}',
    ]);
  });

  it('a password in a URL or a connection string is replaced alone, so the host stays readable', async () => {
    const r = new Redaction();
    expect(await r.text('see https://alice:pa55-w0rd@example.com/x and postgres://bob:Sup3r-s3cret@db.internal:5432/app', 'global')).toBe(
      'see https://alice:[redacted: URL password]@example.com/x and postgres://bob:[redacted: PostgreSQL password]@db.internal:5432/app',
    );
  });

  it('a text with nothing secret comes back unchanged, and a redacted text is not redacted again', async () => {
    const r = new Redaction();
    const plain = ['password: string', 'the password is wrong', 'const password = getPassword();', 'PWD=/home/u1/project', 'no secret here'];
    expect(await r.texts(plain, 'global')).toEqual(plain);
    const once = await r.text(`password: "p4ss word!" and ${githubToken()}`, 'global');
    expect(once).toBe('password: "[redacted: password]" and [redacted: GitHub token]');
    expect(await r.text(once, 'global')).toBe(once);
  });

  it('finds a secret in each of many texts linted together, and texts a batch match spans are linted alone', async () => {
    const tokens = Array.from({ length: 50 }, githubToken);
    // Linted together, this pattern matches from the first text into the second, over the start of the second's own match.
    const r = new Redaction({ extraPatterns: ['BEGIN-X[\\s\\S]*?END-X'], disabledScopes: [] });
    const texts = ['BEGIN-X one', 'two BEGIN-X inside END-X', ...tokens.map((t) => `token ${t} end`), 'END-X three'];
    const out = await r.texts(texts, 'global');
    expect(out).toEqual(['BEGIN-X one', 'two [redacted: custom pattern]', ...tokens.map(() => 'token [redacted: GitHub token] end'), 'END-X three']);
    expect(await r.text('BEGIN-X one END-X', 'global')).toBe('[redacted: custom pattern]');
  });

  it('a disabled scope keeps its texts as written; extra patterns run in RE2 and a bad one is reported, not fatal', async () => {
    const warnings: string[] = [];
    const settings = { extraPatterns: ['ACME-[0-9]{6}', '(unclosed'], disabledScopes: ['project:vault'] };
    const r = new Redaction(() => settings, (w) => warnings.push(w));
    const token = githubToken();
    expect(await r.text(`ticket ACME-123456 and ${token}`, 'global')).toBe('ticket [redacted: custom pattern] and [redacted: GitHub token]');
    expect(await r.text(`ticket ACME-123456 and ${token}`, 'project:vault')).toBe(`ticket ACME-123456 and ${token}`);
    expect(warnings).toEqual([expect.stringContaining('(unclosed')]);
  });

  it('redacts the strings inside a JSON value and keeps its shape', async () => {
    const token = githubToken();
    const r = new Redaction();
    const out = await r.value({ cmd: `curl -H "Authorization: token ${token}"`, n: 3, list: [token, null, true] }, 'history');
    expect(out).toEqual({ cmd: 'curl -H "Authorization: token [redacted: GitHub token]"', n: 3, list: ['[redacted: GitHub token]', null, true] });
  });

  it('reads a string after the name it stands under when that name says secret: a password field, a fact\'s value under its predicate', async () => {
    const r = new Redaction();
    expect(await r.value({ user: 'bob', password: 'x9-abcdef', note: 'x9-abcdef' }, 'history')).toEqual({ user: 'bob', password: '[redacted: password]', note: 'x9-abcdef' });
    expect(await r.value({ subject: 'staging db', predicate: 'password', object: 'abc-1234' }, 'global')).toEqual({ subject: 'staging db', predicate: 'password', object: '[redacted: password]' });
    expect(await r.value({ subject: 'staging db', predicate: 'owner', object: 'abc-1234' }, 'global')).toEqual({ subject: 'staging db', predicate: 'owner', object: 'abc-1234' });
  });
});

describe('redaction settings', () => {
  it('take RECOLLECT_REDACTION_* over the host setting; patterns as a JSON array or one per line, scopes by commas', () => {
    const setting = { extraPatterns: ['A-[0-9]+', 7], disabledScopes: ['project:x'] };
    expect(redactionSettingsFrom(setting, {})).toEqual({ extraPatterns: ['A-[0-9]+'], disabledScopes: ['project:x'] });
    expect(redactionSettingsFrom(setting, { RECOLLECT_REDACTION_EXTRA_PATTERNS: '["x{2,3}", "a,b"]', RECOLLECT_REDACTION_DISABLED_SCOPES: 'global, history' })).toEqual({ extraPatterns: ['x{2,3}', 'a,b'], disabledScopes: ['global', 'history'] });
    expect(redactionSettingsFrom({}, { RECOLLECT_REDACTION_EXTRA_PATTERNS: 'one\n two \n' }).extraPatterns).toEqual(['one', 'two']);
    expect(redactionSettingsFrom({ extraPatterns: 'not a list' }, {})).toEqual({ extraPatterns: [], disabledScopes: [] });
  });

  it('a scope switched off keeps what is written to it as written, read on each write, while other scopes are redacted', async () => {
    let disabledScopes: string[] = [];
    const s = await openServices({ home: tempHome('redaction-scope'), wasmPath: WASM_PATH }, { redaction: () => ({ extraPatterns: [], disabledScopes }) });
    const token = githubToken();
    const note = async (scope: string) => {
      const saved = await callTool(s, 'remember_note', { text: `deploy token ${token}`, scope });
      return (await callTool(s, 'read_memory', { id: saved.id })) as { text?: string; content?: string };
    };
    expect(JSON.stringify(await note('project:plain'))).toContain('deploy token [redacted: GitHub token]');
    disabledScopes = ['project:plain'];
    expect(JSON.stringify(await note('project:plain'))).toContain(`deploy token ${token}`);
    expect(JSON.stringify(await note('global'))).toContain('deploy token [redacted: GitHub token]');
    s.store.close();
  });
});

describe('recollect restore of an export that holds secrets', () => {
  it('journals its facts, entries and notes redacted', async () => {
    const password = 'r3st0red-' + pick(ALNUM, 8);
    const token = githubToken();
    // Written where redaction was off, as an export made before redaction would be.
    const plain = await openServices({ home: tempHome('restore-from'), wasmPath: WASM_PATH }, { redaction: { extraPatterns: [], disabledScopes: ['global', 'history'] } });
    await callTool(plain, 'save_memory', { subject: 'staging db', predicate: 'password', object: password });
    await callTool(plain, 'remember_note', { text: `release token ${token}` });
    fs.writeFileSync(path.join(plain.memory.vault.root, 'keys.md'), `# Keys\n\npassword: ${password}\n`);
    let document = '';
    for (let page: Record<string, unknown> = await callTool(plain, 'export_memory', {}); ; page = await callTool(plain, 'export_memory', { section: page.nextSection, offset: page.nextItem })) {
      document += String(page.document);
      if (page.nextSection === undefined) break;
    }
    plain.store.close();
    expect(document).toContain(password);
    expect(document).toContain(token);

    const home = tempHome('restore-to');
    const restored = await openServices({ home, wasmPath: WASM_PATH });
    expect(await restored.transfer.restore(document)).toMatchObject({ ok: true, restored: { facts: 1, entries: 1, notes: 1 } });
    restored.store.close();
    const files = fs.readdirSync(home, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.endsWith('.br'));
    const all = files.map((e) => fs.readFileSync(path.join(e.parentPath, e.name), 'latin1')).join('\n');
    expect(all.includes(password) || all.includes(token)).toBe(false);
    expect(all).toContain('release token [redacted: GitHub token]');
    expect(all).toContain('password: [redacted: password]');
  });
});
