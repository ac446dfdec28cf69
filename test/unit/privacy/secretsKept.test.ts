import { brotliDecompressSync } from 'node:zlib';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../../src/core/services';
import { Journal } from '../../../src/core/store/journal';
import { readSnapshot } from '../../../src/core/store/snapshot';
import { transcriptFixtures } from '../helpers/fixtures';
import { callTool } from '../helpers/memoryCall';
import { openTemp, tempHome } from '../helpers/tempStore';

/**
 * Issue 21, item 10: secrets planted in a real transcript and in notes must come back from no
 * read and sit in no file of the store; a labelled placeholder stands where each one was.
 */
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const pick = (alphabet: string, n: number) => [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join('');

const AWS_KEY_ID = 'AKIA' + pick('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16);
const AWS_SECRET = pick(ALNUM + '/+', 40);
const GITHUB_TOKEN = 'ghp_' + pick(ALNUM, 36);
const PEM = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().trim();
/** The key's body lines: any one of them left anywhere is a leak. */
const PEM_LINES = PEM.split('\n').filter((l) => !l.startsWith('-----'));
const PASSWORDS = { remember: 'Tr0ub4dor&3x-' + pick(ALNUM, 6), note: 'c0rrect-h0rse-' + pick(ALNUM, 6), file: 's3cr3t-Vault-' + pick(ALNUM, 6), fact: 'f4ct-' + pick(ALNUM, 8), imported: 'imp0rted-' + pick(ALNUM, 6), asked: 'ask3d-' + pick(ALNUM, 8), answered: 'answ3red-' + pick(ALNUM, 6), error: '3rror-' + pick(ALNUM, 8) };
const PLANTED = [AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, ...PEM_LINES, ...Object.values(PASSWORDS)];

const SOURCE = 'claude-code/project-a/b3a7bd3c-5a10-4e7b-8ff0-7fc0cd6d1093.jsonl';

interface Part { type: string; text?: string; id?: string; input?: Record<string, unknown>; tool_use_id?: string; content?: unknown }
interface Line { type?: string; message?: { content?: Part[] | string } }
const parts = (l: Line): Part[] => (Array.isArray(l.message?.content) ? l.message.content : []);

/** The fixture with the AWS pair in the user's request, the token in a tool call's command, and the key in a long tool output (over the inline limit, so it goes to the blob store). */
function plantedTranscript(dir: string): string {
  const lines = fs.readFileSync(path.join(transcriptFixtures(), SOURCE), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);
  const request = lines.find((l) => l.type === 'user' && parts(l).some((c) => c.type === 'text'))!;
  const text = parts(request).filter((c) => c.type === 'text').pop()!;
  text.text += `\nuse these: AWS_ACCESS_KEY_ID=${AWS_KEY_ID}\nAWS_SECRET_ACCESS_KEY=${AWS_SECRET}`;
  const use = lines.flatMap((l) => (l.type === 'assistant' ? parts(l) : [])).find((c) => c.type === 'tool_use')!;
  use.input = { ...use.input, command: `git clone https://x-access-token:${GITHUB_TOKEN}@github.com/o/r.git && sleep 1` };
  const out = lines.flatMap((l) => (l.type === 'user' ? parts(l) : [])).find((c) => c.type === 'tool_result' && c.tool_use_id === use.id)!;
  out.content = `${'build output line\n'.repeat(300)}wrote deploy key:\n${PEM}\ndone, token was ${GITHUB_TOKEN}`;
  const file = path.join(dir, path.basename(SOURCE));
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** Names each planted value found in `text` (as written, or lower-cased as an index would keep it). */
function leaks(text: string): string[] {
  const lower = text.toLowerCase();
  return PLANTED.filter((v) => text.includes(v) || lower.includes(v.toLowerCase())).map((v) => v.slice(0, 12) + '…');
}

let s: Services;
let home: string;

beforeAll(async () => {
  home = tempHome('secrets');
  s = await openTemp(home);
  const report = await s.importer.importPaths([plantedTranscript(tempHome('secrets-transcript'))]);
  expect(report.events).toBeGreaterThan(5);
  expect(await callTool(s, 'remember', { statement: `The staging database password: ${PASSWORDS.remember}` })).toMatchObject({ ok: true });
  expect(await callTool(s, 'remember_note', { text: `the backup passphrase is ${PASSWORDS.note} (rotate monthly)` })).toMatchObject({ ok: true });
  fs.writeFileSync(path.join(s.memory.vault.root, 'ops-notes.md'), `# Ops\n\nThe vault service: password = "${PASSWORDS.file}"\n`);
  expect(await callTool(s, 'index_memory', {})).toMatchObject({ ok: true });
  // A value saved as a fact is read after its predicate: `hunter2`-like values alone look like nothing.
  expect(await callTool(s, 'save_memory', { subject: 'staging database', predicate: 'password', object: PASSWORDS.fact })).toMatchObject({ ok: true, object: '[redacted: password]' });
  const preview = await callTool(s, 'preview_import', { label: 'ops', files: [{ relativePath: 'runbook.md', markdown: `# Runbook\n\nlogin with password: ${PASSWORDS.imported} and ${GITHUB_TOKEN}\n` }] });
  expect(await callTool(s, 'apply_import', { batchId: preview.batchId })).toMatchObject({ ok: true });
  // Requests between agents and error memory are written by agents too.
  await callTool(s, 'whats_new', {}, 'bob');
  const asked = await callTool(s, 'ask_agent', { to: 'bob', request: `deploy with password: ${PASSWORDS.asked} please` }, 'alice');
  expect(await callTool(s, 'answer_request', { id: asked.id, answer: `done; the new password is ${PASSWORDS.answered}` }, 'bob')).toMatchObject({ ok: true });
  expect(await callTool(s, 'chapters_rule_propose', { text: `Release with the deploy token ${GITHUB_TOKEN} only.`, scope: 'project', project: tempHome('secrets-project') })).toMatchObject({ ok: true, text: expect.stringContaining('[redacted: GitHub token]') });
  expect(await callTool(s, 'write_error', { tool_name: 'git', symptom: 'push rejected: bad credentials', cause: `stale token ${GITHUB_TOKEN}`, action: `set password: ${PASSWORDS.error} in the keychain`, keywords: ['git', 'credentials'], outcome: 'resolved' })).toMatchObject({ ok: true, recorded: true });
}, 60_000);

afterAll(() => s.store.close());

describe('secrets planted in a real transcript and in notes', () => {
  it('come back from no read: chat_history, lcm_grep, search_text, get_context, export_memory', async () => {
    const answers: Record<string, unknown> = {};
    const list = await callTool(s, 'chat_history', { mode: 'list', time_range: 'all' }, 'claude-code');
    const runs = (list.runs as { task_id: string }[]).map((r) => r.task_id);
    expect(runs.length).toBeGreaterThan(0);
    answers.read = await callTool(s, 'chat_history', { mode: 'read', task_id: runs.slice(0, 16), scope: 'full' }, 'claude-code');
    answers.tools = await callTool(s, 'chat_history', { mode: 'tool_list' }, 'claude-code');
    for (const q of ['deploy key', 'AWS_SECRET_ACCESS_KEY', 'password', 'passphrase', 'git clone']) answers[`search ${q}`] = await callTool(s, 'chat_history', { mode: 'search', query: q }, 'claude-code');
    for (const [mode, pattern] of [['regex', 'AKIA[A-Z0-9]{16}'], ['regex', 'gh[pousr]_[A-Za-z0-9]{36}'], ['regex', 'PRIVATE KEY'], ['regex', 'redacted'], ['full_text', 'deploy key'], ['full_text', 'redacted']] as const) {
      answers[`lcm_grep ${pattern}`] = await callTool(s, 'lcm_grep', { pattern, mode, allConversations: true, limit: 200 }, 'claude-code');
    }
    for (const q of ['password', 'passphrase', 'staging database', 'vault service', 'redacted']) answers[`search_text ${q}`] = await callTool(s, 'search_text', { query: q });
    answers.context = await callTool(s, 'get_context', { query: 'staging database password and the backup passphrase', max_tokens: 4000 });
    const pages: unknown[] = [];
    let page: Record<string, unknown> = await callTool(s, 'export_memory', {});
    for (;;) {
      pages.push(page);
      if (!page.nextSection) break;
      page = await callTool(s, 'export_memory', { section: page.nextSection, offset: page.nextItem });
    }
    pages.forEach((p, i) => (answers[`export page ${i}`] = p));
    answers.requests = await callTool(s, 'list_requests', { status: 'answered', to: 'bob' }, 'alice');
    answers.errors = await callTool(s, 'error_history', { query: 'push rejected credentials' });
    for (const [name, answer] of Object.entries(answers)) {
      expect((answer as { ok?: unknown }).ok, name).toBe(true);
      expect(leaks(JSON.stringify(answer)), name).toEqual([]);
    }

    // The placeholders stand where the secrets were, and reads find them.
    const read = JSON.stringify(answers.read);
    for (const label of ['AWS access key', 'AWS secret access key', 'GitHub token', 'private key']) expect(read).toContain(`[redacted: ${label}]`);
    expect(read).toContain('AWS_SECRET_ACCESS_KEY=[redacted: AWS secret access key]');
    expect(read).toContain('https://x-access-token:[redacted: GitHub token]@github.com');
    expect(read).toContain('wrote deploy key:\\n[redacted: private key]\\ndone');
    expect((answers['lcm_grep redacted'] as { matches: unknown[] }).matches.length).toBeGreaterThan(0);
    for (const q of ['AKIA[A-Z0-9]{16}', 'gh[pousr]_[A-Za-z0-9]{36}']) expect((answers[`lcm_grep ${q}`] as { matches: unknown[] }).matches).toEqual([]);
    const notes = JSON.stringify([answers['search_text password'], answers['search_text passphrase'], answers['search_text vault service']]);
    expect(notes).toContain('The staging database password: [redacted: password]');
    expect(notes).toContain('the backup passphrase is [redacted: password] (rotate monthly)');
    expect(notes).toContain('password = \\"[redacted: password]\\"');
    expect(JSON.stringify(pages)).toContain('[redacted: password]');
    expect(JSON.stringify(answers.requests)).toContain('the new password is [redacted: password]');
    expect(JSON.stringify(answers.errors)).toContain('stale token [redacted: GitHub token]');
    expect(JSON.stringify(await callTool(s, 'retrieve_memory', { subject: 'staging database' }))).toContain('"object":"[redacted: password]"');
    expect(JSON.stringify(await callTool(s, 'search_text', { query: 'runbook login' }))).toContain('login with password: [redacted: password] and [redacted: GitHub token]');
  });

  it('sit in no file: the journal, the snapshot, the blobs, the vault', async () => {
    // The journal as the store reads it (sealed segments included) and as bytes on disk.
    const ops: string[] = [];
    const journal = new Journal(path.join(home, 'journal.jsonl'));
    journal.readFrom(0, (op) => ops.push(JSON.stringify(op)), () => undefined);
    journal.close();
    expect(ops.length).toBeGreaterThan(3);
    expect(leaks(ops.join('\n')), 'journal operations').toEqual([]);
    expect(ops.join('\n')).toContain('[redacted: GitHub token]');
    for (const f of filesUnder(home).filter((f) => path.basename(f).startsWith('journal'))) expect(leaks(fs.readFileSync(f, 'latin1')), f).toEqual([]);

    // The snapshot, decoded the way the store reads it: the database image, index included.
    s.store.checkpoint();
    const image = readSnapshot(path.join(home, 'store.sqlite'));
    expect(image?.length).toBeGreaterThan(0);
    const db = Buffer.from(image!).toString('latin1');
    expect(leaks(db), 'snapshot').toEqual([]);
    expect(db.includes('AWS_SECRET_ACCESS_KEY=[redacted: AWS secret access key]'), 'the placeholder in the snapshot').toBe(true);

    // Blobs, each decoded as the blob store reads it; the long tool output is among them.
    const blobs = filesUnder(path.join(home, 'blobs')).map((f) => (f.endsWith('.br') ? brotliDecompressSync(fs.readFileSync(f)) : fs.readFileSync(f)).toString('utf8'));
    expect(blobs.some((b) => b.includes('wrote deploy key:\n[redacted: private key]\ndone'))).toBe(true);
    expect(leaks(blobs.join('\n')), 'blobs').toEqual([]);

    // The vault: the day log remember and remember_note wrote, and the note a person wrote.
    const vault = filesUnder(s.memory.vault.root).map((f) => fs.readFileSync(f, 'utf8'));
    expect(leaks(vault.join('\n')), 'vault').toEqual([]);
    expect(fs.readFileSync(path.join(s.memory.vault.root, 'ops-notes.md'), 'utf8')).toBe('# Ops\n\nThe vault service: password = "[redacted: password]"\n');

    // Nothing anywhere else in the home either (results, machine files, temp files).
    for (const f of filesUnder(home).filter((f) => !f.endsWith('.br') && !f.endsWith('store.sqlite'))) expect(leaks(fs.readFileSync(f, 'latin1')), f).toEqual([]);
  });
});
