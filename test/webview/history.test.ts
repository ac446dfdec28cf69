import { localServices } from '../../src/core/owner/serviceProxy';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionIdOf } from '../../src/core/history/importer';
import { SessionBrowse } from '../../src/core/history/sessionBrowse';
import { isRefusal } from '../../src/core/refusal';
import type { Services } from '../../src/core/services';
import { answerHistoryMessage, historyViewHandlers, type DoorCommandResult, type HistoryPorts } from '../../src/host/historyViewHandlers';
import type { HistoryHandlers } from '../../webview/shared/historyProtocol';
import { writeClaudeSession, type Step } from '../unit/helpers/claudeTranscript';
import { transcriptFixtures } from '../unit/helpers/fixtures';
import { openTemp, tempHome } from '../unit/helpers/tempStore';
import { SHOTS, hostPost, openWebview, type WebviewPage } from './helpers/webviewPage';

/** The fixture Claude Code session of an /init run: requests, parallel tool calls, replies. */
const INIT = sessionIdOf('claude-code', '1af7fc5e-8455-4414-9ccd-011d40f70b2a');
const HOSTILE_ID = '22222222-aaaa-4bbb-8ccc-000000000002';
const OPEN_ID = '33333333-aaaa-4bbb-8ccc-000000000003';
const BIG_ID = '44444444-aaaa-4bbb-8ccc-000000000004';
const BIG_ROWS = 10_000;

const HOSTILE: Step[] = [
  { user: 'Summarise <script>window.__pwned = "script"</script> please' },
  {
    assistant:
      'See [the docs](javascript:window.__pwned="md") or <a href="javascript:window.__pwned=1" onclick="window.__pwned=2">this</a>, ' +
      '<img src=x onerror="window.__pwned=3"> and https://example.com/guide?x=1. Also [safe](https://example.org/a).',
  },
  { tool: 'WebFetch', id: 'toolu_h1', input: { url: 'javascript:alert(1)' } },
  { result: '<svg onload="window.__pwned=4"></svg><iframe src="javascript:window.__pwned=5"></iframe>', id: 'toolu_h1' },
  { assistant: 'Done: <b onmouseover="window.__pwned=6">bold</b>' },
];

const OPEN_TURN: Step[] = [
  { user: 'Set up the parser' },
  { assistant: 'The parser lives in src.' },
  { user: 'Run the tests' },
  { assistant: 'Running them now.' },
  { tool: 'Bash', id: 'toolu_open', input: { command: 'npm test' } },
];

function bigSession(): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < BIG_ROWS / 2; i++) {
    steps.push({ user: `Question ${i + 1}: how does part ${i} of the pipeline behave under load?` });
    steps.push({ assistant: `Answer ${i + 1}: part ${i} batches its writes, retries twice and logs the rest.\nSecond line of answer ${i + 1}.` });
  }
  return steps;
}

describe('session-history panel, real Chromium against a real store', () => {
  let services: Services;
  let browse: SessionBrowse;
  let handlers: HistoryHandlers;
  let view: WebviewPage;
  let page: Page;
  // Stand-ins for VS Code only: the row commands and openExternal. The door behind the stand-in is the real one.
  const doorCalls: { intent: string; sessionId: string; uptoSeq: number }[] = [];
  const opened: string[] = [];
  let opening: { sessionId?: string; seq?: number } = {};
  const timings: Record<string, number> = {};

  const ports: HistoryPorts = {
    async runDoor(intent, args): Promise<DoorCommandResult> {
      doorCalls.push({ intent, ...args });
      const result = await services.chapters.door({ ...args, intent, client: 'webview-test' });
      return isRefusal(result) ? result : { ...result, opened: { opened: false, how: 'test stand-in for VS Code: no chat opened' } };
    },
    openExternal: (url) => {
      opened.push(url);
      return Promise.resolve(true);
    },
    takeOpening() {
      const o = opening;
      opening = {};
      return o;
    },
  };

  const rowsOnScreen = () => page.locator('.row').count();
  const openSession = async (id: string) => {
    await page.locator(`[data-session="${id}"]`).click();
    await expect.poll(() => page.locator('.detail-head h1').count(), { timeout: 15_000 }).toBe(1);
  };

  beforeAll(async () => {
    services = await openTemp();
    await services.importer.importPaths([transcriptFixtures()]);
    const dir = tempHome('history-view');
    writeClaudeSession(dir, HOSTILE_ID, HOSTILE, '/work/hostile', Date.UTC(2025, 10, 2, 9));
    writeClaudeSession(dir, OPEN_ID, OPEN_TURN, '/work/open', Date.UTC(2025, 10, 3, 9));
    writeClaudeSession(dir, BIG_ID, bigSession(), '/work/big', Date.UTC(2025, 10, 1, 9));
    let t = Date.now();
    await services.importer.importPaths([dir]);
    timings.importMs = Date.now() - t;
    browse = new SessionBrowse(services.store);
    handlers = historyViewHandlers(localServices(services), ports);
    t = Date.now();
    const big = await handlers.session({ sessionId: sessionIdOf('claude-code', BIG_ID) });
    timings.bigSessionRequestMs = Date.now() - t;
    timings.bigSessionMessageBytes = JSON.stringify(big).length;
    view = await openWebview('history', 'Session History', (raw) => answerHistoryMessage(raw, handlers));
    page = view.page;
    // The page asks what it was opened for as it starts; that question is answered before any test sets one.
    await page.waitForSelector('.session', { timeout: 15_000 });
  });

  afterAll(async () => {
    await view?.close();
    services?.store.close();
    console.log(`session-history timings: ${JSON.stringify(timings)}`);
  });

  it('lists sessions from every source, and filters by source', async () => {
    const sessions = page.locator('.session');
    const all = Number(services.history.counts().sessions);
    await expect.poll(() => sessions.count(), { timeout: 15_000 }).toBe(all);
    const sources = await page.locator('select[aria-label="Source"] option').allTextContents();
    for (const s of ['Claude Code', 'Codex', 'Copilot CLI', 'VS Code chat']) expect(sources.join('|')).toContain(s);
    await page.selectOption('select[aria-label="Source"]', 'codex');
    await expect.poll(() => sessions.count(), { timeout: 10_000 }).toBe(2);
    expect((await sessions.allTextContents()).every((t) => t.includes('Codex'))).toBe(true);
    await page.selectOption('select[aria-label="Source"]', '');
    await expect.poll(() => sessions.count(), { timeout: 10_000 }).toBe(all);
  });

  it('searches through the history index and marks the matched words', async () => {
    await page.getByLabel('Search sessions').fill('sleep');
    await expect.poll(() => page.locator('.note').textContent(), { timeout: 10_000 }).toMatch(/matching event/);
    const first = page.locator('.session').first();
    expect((await first.locator('mark').allTextContents()).map((m) => m.toLowerCase())).toContain('sleep');
    const found = services.history.search({ query: 'sleep', limit: 400, sort: 'relevance' });
    if (isRefusal(found)) throw new Error(found.reason);
    expect(await page.locator('.session').count()).toBe(new Set(found.hits.map((h) => h.session_id)).size);
    await page.getByLabel('Search sessions').fill('');
  });

  it('renders a session’s rows: messages with text, tool calls collapsed with their result size', async () => {
    await openSession(INIT);
    const expected = browse.rows(INIT, 280);
    await expect.poll(rowsOnScreen, { timeout: 10_000 }).toBe(expected.length);
    const firstAssistant = expected.find((r) => r.kind === 'assistant')!;
    expect(await page.locator(`.row[data-seq="${firstAssistant.seq}"] .preview`).textContent()).toBe(firstAssistant.preview);
    const bash = expected.find((r) => r.kind === 'tool_call' && r.toolName === 'Bash' && r.result)!;
    const bashRow = page.locator(`.row[data-seq="${bash.seq}"]`);
    expect(await bashRow.getAttribute('class')).toContain('compact');
    expect(await bashRow.locator('.row-meta').textContent()).toContain(`result ${bash.result!.bytes} B`);
    // A tool call opens to its input and its result, fetched from the store.
    await bashRow.locator('.toggle').click();
    await expect.poll(() => bashRow.locator('.full').textContent(), { timeout: 10_000 }).toContain(`Result #${bash.result!.seq}`);
    await bashRow.locator('.toggle').click();
  });

  it('Continue with chapters on an assistant row sends that row’s seq; the door behind the stand-in VS Code command archives, and the chapter appears as a span', async () => {
    const assistants = browse.rows(INIT, 10).filter((r) => r.kind === 'assistant');
    const row = assistants[1]!; // a reply in the middle: archive up to it, not to the end
    doorCalls.length = 0;
    view.posted.length = 0;
    await page.locator(`button[data-action="continue"][data-seq="${row.seq}"]`).click();
    await expect.poll(() => page.locator('.outcome').getAttribute('data-outcome'), { timeout: 20_000 }).toBe('ok');
    const sent = view.posted.filter((m) => (m as { kind?: string }).kind === 'door');
    expect(sent).toEqual([{ type: 'request', id: expect.any(Number), kind: 'door', params: { intent: 'continue', sessionId: INIT, uptoSeq: row.seq } }]);
    expect(doorCalls).toEqual([{ intent: 'continue', sessionId: INIT, uptoSeq: row.seq }]);
    const stored = services.chapters.chaptersOf(INIT);
    expect(stored.length).toBeGreaterThan(0);
    expect(Math.max(...stored.map((c) => c.endSeq))).toBe(row.seq);
    expect(await page.locator('.outcome').textContent()).toContain(services.chapters.childrenOf(INIT)[0]!.id);
    // The span is drawn over its seq range, and collapsing it hides those rows.
    const header = page.locator(`[data-chapter="${stored[0]!.id}"]`);
    await expect.poll(() => header.count(), { timeout: 10_000 }).toBe(1);
    expect(await header.textContent()).toContain(`seq ${stored[0]!.startSeq}–${stored[0]!.endSeq}`);
    const before = await rowsOnScreen();
    await header.locator('.toggle').click();
    const hidden = browse.rows(INIT, 10).filter((r) => r.seq >= stored[0]!.startSeq && r.seq <= stored[0]!.endSeq).length;
    await expect.poll(rowsOnScreen).toBe(before - hidden);
    await page.screenshot({ path: path.join(SHOTS, 'history-view-chapters.png') });
    await header.locator('.toggle').click();
  });

  it('Fork with chapters sends the fork intent with that row’s seq (stand-in VS Code command)', async () => {
    const last = browse.rows(INIT, 10).filter((r) => r.kind === 'assistant').pop()!;
    doorCalls.length = 0;
    await page.locator(`button[data-action="fork"][data-seq="${last.seq}"]`).click();
    await expect.poll(() => doorCalls.length, { timeout: 20_000 }).toBe(1);
    expect(doorCalls[0]).toEqual({ intent: 'fork', sessionId: INIT, uptoSeq: last.seq });
    await expect.poll(() => page.locator('.outcome').textContent(), { timeout: 20_000 }).toContain('Fork up to');
  });

  it('greys out Continue and Fork on a reply inside an unfinished turn, says why, and sends nothing', async () => {
    const id = sessionIdOf('claude-code', OPEN_ID);
    await openSession(id);
    const ceiling = services.chapters.ceiling(id);
    if (isRefusal(ceiling)) throw new Error(ceiling.reason);
    const replies = browse.rows(id, 10).filter((r) => r.kind === 'assistant');
    const inOpen = replies.find((r) => r.seq > ceiling.archiveCeiling)!;
    const archivable = replies.find((r) => r.seq <= ceiling.archiveCeiling)!;
    const blocked = page.locator(`button[data-action="continue"][data-seq="${inOpen.seq}"]`);
    await expect.poll(() => blocked.getAttribute('aria-disabled'), { timeout: 10_000 }).toBe('true');
    expect(await blocked.getAttribute('title')).toContain('unfinished turn');
    expect(await page.locator(`button[data-action="fork"][data-seq="${inOpen.seq}"]`).getAttribute('aria-disabled')).toBe('true');
    expect(await page.locator(`button[data-action="continue"][data-seq="${archivable.seq}"]`).getAttribute('aria-disabled')).toBe('false');
    doorCalls.length = 0;
    view.posted.length = 0;
    await blocked.click({ force: true });
    await page.waitForTimeout(300);
    expect(view.posted.filter((m) => (m as { kind?: string }).kind === 'door')).toEqual([]);
    // A message that claims the row anyway is refused by the host, and the command is never run.
    const forged = await answerHistoryMessage({ type: 'request', id: 99, kind: 'door', params: { intent: 'continue', sessionId: id, uptoSeq: inOpen.seq } }, handlers);
    expect(forged).toMatchObject({ ok: true, result: { ok: false, reason: expect.stringContaining('above the archive ceiling') } });
    expect(doorCalls).toEqual([]);
  });

  it('renders hostile transcript text inert: no script runs, no on* attributes, no javascript: links; http(s) opens through the host', async () => {
    const id = sessionIdOf('claude-code', HOSTILE_ID);
    await openSession(id);
    await expect.poll(rowsOnScreen, { timeout: 10_000 }).toBe(browse.rows(id, 10).length);
    for (const r of await page.locator('.row .toggle').all()) await r.click();
    await expect.poll(() => page.locator('.full pre').count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(4);
    const text = await page.locator('.pane').textContent();
    expect(text).toContain('<script>window.__pwned = "script"</script>');
    expect(text).toContain('<img src=x onerror="window.__pwned=3">');
    expect(text).toContain('[the docs](javascript:window.__pwned="md")');
    const inert = await page.evaluate(() => {
      const all = Array.from(document.querySelectorAll('*'));
      return {
        pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
        onAttributes: all.flatMap((el) => el.getAttributeNames().filter((a) => a.toLowerCase().startsWith('on')).map((a) => `${el.tagName}[${a}]`)),
        hrefs: all.filter((el) => el.hasAttribute('href') || el.hasAttribute('src')).map((el) => el.getAttribute('href') ?? el.getAttribute('src')),
        injected: document.querySelectorAll('.pane script, .pane img, .pane svg, .pane iframe, .pane a, .pane b').length,
      };
    });
    expect(inert).toEqual({ pwned: null, onAttributes: [], hrefs: expect.any(Array), injected: 0 });
    expect(inert.hrefs.filter((h) => /^\s*javascript:/i.test(h ?? ''))).toEqual([]);
    // Only the http(s) URLs became links; a click asks the host, which opens it (stand-in for VS Code).
    const links = await page.locator('.pane button.link').allTextContents();
    expect(new Set(links)).toEqual(new Set(['https://example.com/guide?x=1', 'https://example.org/a']));
    await page.locator('.pane button.link', { hasText: 'https://example.com/guide?x=1' }).first().click();
    await expect.poll(() => opened).toEqual(['https://example.com/guide?x=1']);
    expect(await answerHistoryMessage({ type: 'request', id: 7, kind: 'openLink', params: { url: 'javascript:alert(1)' } }, handlers)).toBeUndefined();
    await page.screenshot({ path: path.join(SHOTS, 'history-view-hostile.png') });
  });

  it(`scrolls a ${BIG_ROWS.toLocaleString('en')}-row session to the end with a bounded DOM`, async () => {
    const id = sessionIdOf('claude-code', BIG_ID);
    await openSession(id);
    await expect.poll(() => page.locator('.virtual').getAttribute('data-count'), { timeout: 20_000 }).toBe(String(BIG_ROWS));
    const run = await page.evaluate(async () => {
      const el = document.querySelector<HTMLElement>('.virtual')!;
      const frame = () => new Promise<number>((r) => requestAnimationFrame(r));
      const gaps: number[] = [];
      let maxRows = 0;
      let last = await frame();
      while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
        el.scrollTop += 3000;
        const now = await frame();
        gaps.push(now - last);
        last = now;
        maxRows = Math.max(maxRows, document.querySelectorAll('.row').length);
      }
      await frame();
      await frame();
      const box = el.getBoundingClientRect();
      const lastRow = document.querySelector('.row[data-seq="10000"]')?.getBoundingClientRect();
      gaps.sort((a, b) => a - b);
      return {
        frames: gaps.length,
        p50: gaps[Math.floor(gaps.length * 0.5)]!,
        p95: gaps[Math.floor(gaps.length * 0.95)]!,
        max: gaps[gaps.length - 1]!,
        maxRows,
        nodes: document.querySelectorAll('*').length,
        lastVisible: !!lastRow && lastRow.top >= box.top - 1 && lastRow.bottom <= box.bottom + 1,
        height: el.scrollHeight,
      };
    });
    Object.assign(timings, { scrollFrames: run.frames, frameP50Ms: Math.round(run.p50), frameP95Ms: Math.round(run.p95), frameMaxMs: Math.round(run.max), maxRowsInDom: run.maxRows, domNodes: run.nodes });
    expect(run.lastVisible).toBe(true);
    expect(run.maxRows).toBeLessThan(60);
    expect(run.nodes).toBeLessThan(1500);
    // Headless Chromium on two cores: generous, but a list that rendered every row would take seconds a frame.
    expect(run.p95).toBeLessThan(100);
    await page.screenshot({ path: path.join(SHOTS, 'history-view-10k-end.png') });
  });

  it('keeps the selected session, filters and scroll position across a reload', async () => {
    const id = sessionIdOf('claude-code', BIG_ID);
    await page.selectOption('select[aria-label="Source"]', 'claude-code');
    await page.evaluate(() => {
      document.querySelector<HTMLElement>('.virtual')!.scrollTop = 460_000;
    });
    await page.waitForTimeout(400); // past the scroll-save debounce
    const firstBefore = await page.locator('.row').first().getAttribute('data-seq');
    // A row inside the viewport (rows above it are drawn too, in the overscan margin).
    const openedSeq = await page.evaluate(() => {
      const top = document.querySelector('.virtual')!.getBoundingClientRect().top;
      return Array.from(document.querySelectorAll('.row')).find((r) => r.getBoundingClientRect().top >= top)!.getAttribute('data-seq');
    });
    const opened = page.locator(`.row[data-seq="${openedSeq}"]`);
    await opened.locator('.toggle').click();
    await expect.poll(() => opened.locator('.full pre').textContent(), { timeout: 10_000 }).toMatch(/^(Question|Answer) /);
    await page.reload();
    await expect.poll(() => page.locator('.detail-head h1').textContent(), { timeout: 15_000 }).toContain('Question 1');
    expect(await page.locator('.session.selected').getAttribute('data-session')).toBe(id);
    await expect.poll(() => page.evaluate(() => document.querySelector<HTMLElement>('.virtual')?.scrollTop ?? -1), { timeout: 10_000 }).toBe(460_000);
    expect(await page.locator('.row').first().getAttribute('data-seq')).toBe(firstBefore);
    // A row that was open is open again, with its text fetched anew.
    await expect.poll(() => page.locator(`.row.open[data-seq="${openedSeq}"] .full pre`).textContent(), { timeout: 10_000 }).toMatch(/^(Question|Answer) /);
    expect(await page.locator('select[aria-label="Source"]').inputValue()).toBe('claude-code');
    expect((await page.locator('.session').allTextContents()).every((t) => t.includes('Claude Code'))).toBe(true);
    await page.selectOption('select[aria-label="Source"]', '');
  });

  it('opens on the session and row a command asked for, and follows a reveal while open', async () => {
    const id = sessionIdOf('claude-code', BIG_ID);
    opening = { sessionId: INIT };
    await page.reload();
    // Generous waits: the 10,000-row session takes seconds to load on a busy two-core machine.
    await expect.poll(() => page.locator('.session.selected').getAttribute('data-session', { timeout: 5_000 }), { timeout: 45_000 }).toBe(INIT);
    await hostPost(page, { type: 'reveal', sessionId: id, seq: 5001 });
    await expect.poll(() => page.locator('.row.target').getAttribute('data-seq', { timeout: 5_000 }), { timeout: 45_000 }).toBe('5001');
  }, 120_000);

  it('follows a reveal that arrives just as the previously opened session’s rows land', async () => {
    const big = sessionIdOf('claude-code', BIG_ID);
    const hostile = sessionIdOf('claude-code', HOSTILE_ID);
    // The reveal is posted from the page the moment the hostile session's rows arrive: it is
    // handled before the panel has finished settling on those rows, the moment that used to lose it.
    await page.evaluate(
      ({ from, to }) => {
        const onMessage = (e: MessageEvent<{ type?: string; kind?: string; result?: { session?: { id?: string } } }>) => {
          if (e.data?.type !== 'response' || e.data.kind !== 'session' || e.data.result?.session?.id !== from) return;
          window.removeEventListener('message', onMessage);
          window.postMessage({ type: 'reveal', sessionId: to, seq: 5001 }, '*');
        };
        window.addEventListener('message', onMessage);
      },
      { from: hostile, to: big },
    );
    await page.locator(`[data-session="${hostile}"]`).click();
    await expect.poll(() => page.locator('.session.selected').getAttribute('data-session', { timeout: 5_000 }), { timeout: 45_000 }).toBe(big);
    await expect.poll(() => page.locator('.row.target').getAttribute('data-seq', { timeout: 5_000 }), { timeout: 45_000 }).toBe('5001');
  }, 120_000);

  it('drops malformed messages and ran under the strict CSP without a violation', async () => {
    const bad = [
      { type: 'request', id: 1, kind: 'drop_tables', params: {} },
      { type: 'request', id: 1, kind: 'door', params: { intent: 'continue', sessionId: INIT, uptoSeq: '5' } },
      { type: 'request', id: 1, kind: 'door', params: { intent: 'archive', sessionId: INIT, uptoSeq: 5 } },
      { type: 'request', id: 1, kind: 'door', params: { intent: 'continue', sessionId: INIT, uptoSeq: 5, note: 'a note the panel never sends' } },
      { type: 'request', id: 1, kind: 'session', params: { sessionId: '../../etc/passwd' } },
      { type: 'request', id: 1, kind: 'sessions', params: { since: 'yesterday' } },
      { type: 'request', id: 1.5, kind: 'opening', params: {} },
    ];
    for (const m of bad) expect(await answerHistoryMessage(m, handlers)).toBeUndefined();
    expect(await answerHistoryMessage({ type: 'request', id: 3, kind: 'session', params: { sessionId: 'ses_0000000000000000' } }, handlers)).toMatchObject({ ok: false, id: 3 });
    expect(await view.csp()).toEqual([]);
    expect(view.problems).toEqual([]);
    expect(fs.existsSync(path.join(SHOTS, 'history-view-10k-end.png'))).toBe(true);
  });
});
