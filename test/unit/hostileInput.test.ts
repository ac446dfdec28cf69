import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/core/services';
import { queryRows } from '../../src/core/store/sqlite';
import { invokeTool } from '../../src/core/tools/invoke';
import { findTool } from '../../src/core/tools/registry';
import { openTemp, tempHome } from './helpers/tempStore';

/** Issue 21, item 9: validation gaps that let hostile input through, each refused now with what is wrong. */

type Reply = Record<string, unknown>;
let s: Services;
const call = (name: string, input: Record<string, unknown>) => invokeTool(findTool(name)!, input, s, { client: 'vitest', workspace: '/work/demo' }) as Promise<Reply>;
const notes = () => Number(queryRows(s.store.db, 'SELECT count(*) AS n FROM notes')[0]?.n ?? 0);

beforeAll(async () => {
  s = await openTemp();
});
afterAll(() => s.store.close());

describe('source and cites are one line of printable text', () => {
  const hostile: [string, string, RegExp][] = [
    ['a NUL', 'claude\u0000code', /control character U\+0000 at character 6/],
    ['a terminal escape sequence', '\u001b[31mroot\u001b[0m', /control character U\+001B at character 0/],
    ['a C1 control', 'agent\u009b2J', /control character U\+009B/],
    ['a lone surrogate', 'agent\ud800', /unpaired surrogate at character 5/],
    ['a right-to-left override', 'evil\u202egnp.exe', /formatting character U\+202E/],
    ['a newline', 'codex\nclaude-code', /control character U\+000A/],
  ];
  for (const [label, value, reason] of hostile) {
    it(`refuses ${label} in source and in cites, and writes nothing`, async () => {
      const before = notes();
      for (const tool of ['remember_note', 'remember']) {
        const text = tool === 'remember' ? { statement: 'the deploy runs on Fridays' } : { text: 'the deploy runs on Fridays' };
        const bySource = await call(tool, { ...text, source: value });
        expect(bySource, `${tool} source`).toMatchObject({ ok: false, reason: expect.stringMatching(/source/) });
        expect(String(bySource.reason)).toMatch(reason);
        const byCite = await call(tool, { ...text, cites: ['notes/ok.md', value] });
        expect(byCite, `${tool} cites`).toMatchObject({ ok: false, reason: expect.stringMatching(/cites\.1: a cite/) });
        expect(String(byCite.reason)).toMatch(reason);
      }
      expect(notes()).toBe(before);
    });
  }

  it('accepts names and cites with any printable Unicode', async () => {
    expect(await call('remember_note', { text: 'printable names pass', source: 'Cursor 🤖 (été)', cites: ['notes/été.md', 'fact:abc'] })).toMatchObject({ ok: true });
  });
});

describe('timezone offsets are ones a place uses', () => {
  it('refuses +99:99 and other impossible offsets, saying the range', async () => {
    for (const tz of ['+99:99', '+15:00', '-13:00', '+05:60', '+0999']) {
      const r = await call('remember_note', { text: `filed in ${tz}`, timezone: tz });
      expect(r, tz).toMatchObject({ ok: false, reason: expect.stringContaining(`timezone "${tz}" is not a UTC offset any place uses: offsets run from -12:00 to +14:00`) });
    }
  });

  it('files a note under the day of the offsets at both ends of the range', async () => {
    for (const [tz, ok] of [['+14:00', true], ['-12:00', true], ['+05:45', true], ['-0330', true]] as const) {
      const r = await call('remember_note', { text: `filed in ${tz}`, timezone: tz });
      expect(r.ok, tz).toBe(ok);
    }
  });
});

describe('chapters_rule_propose takes a project folder that exists', () => {
  let folder: string;
  beforeAll(() => {
    folder = tempHome('rule-project');
    fs.writeFileSync(path.join(folder, 'README.md'), 'x');
  });

  it('refuses a relative path, a made-up folder, a file and control characters, and proposes nothing', async () => {
    const cases: [string, RegExp][] = [
      ['my-project', /project "my-project" is not an absolute path/],
      ['../../etc', /is not an absolute path/],
      ['/no/such/folder/anywhere', /does not exist on this machine/],
      [path.join(folder, 'README.md'), /is a file, not a folder/],
      [`${folder}\u0000`, /control character U\+0000/],
    ];
    for (const [project, reason] of cases) {
      const r = await call('chapters_rule_propose', { text: 'Use pnpm, never npm.', project });
      expect(r, project).toMatchObject({ ok: false, reason: expect.stringMatching(reason) });
      expect(String(r.reason)).toContain('Nothing was proposed');
    }
    expect(queryRows(s.store.db, 'SELECT count(*) AS n FROM rules')[0]?.n).toBe(0);
  });

  it('proposes a rule for an existing folder', async () => {
    expect(await call('chapters_rule_propose', { text: 'Use pnpm, never npm.', project: folder })).toMatchObject({ ok: true, id: expect.any(String), duplicate: false });
  });
});
