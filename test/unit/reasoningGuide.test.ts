import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_GUIDES, BUILTIN_TOPICS } from '../../src/core/guides/builtinGuides';
import { GUIDE_MAX_BYTES, GuideService } from '../../src/core/guides/guides';
import type { Services } from '../../src/core/services';
import { invokeTool } from '../../src/core/tools/invoke';
import { reasoningGuideTool } from '../../src/core/tools/reasoningGuide';
import type { ToolDefinition } from '../../src/core/tools/toolDefinition';
import { tempHome } from './helpers/tempStore';

type Reply = Record<string, unknown>;

function guideCall(folders: string[] = []) {
  // reasoning_guide reads no store; only the guides service matters.
  const services = { guides: new GuideService(folders) } as unknown as Services;
  return (input: unknown) => invokeTool(reasoningGuideTool as ToolDefinition, input, services, { client: 'vitest' }) as Promise<Reply>;
}

function guideFolder(files: Record<string, string>): string {
  const dir = path.join(tempHome('guides'), '.recollect', 'guides');
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

describe('reasoning_guide', () => {
  it('has every topic the spec lists, each a short practical guide', () => {
    expect([...BUILTIN_TOPICS].sort()).toEqual(
      ['tool_generate', 'tool_error', 'web_search', 'market_analysis', 'targeted_read', 'ask_user', 'subagent_dispatch', 'write_todo', 'html_render', 'office', 'figure'].sort(),
    );
    for (const topic of BUILTIN_TOPICS) {
      const lines = BUILTIN_GUIDES[topic].split('\n').length;
      expect(lines, topic).toBeGreaterThanOrEqual(10);
      expect(lines, topic).toBeLessThanOrEqual(30);
    }
    expect(BUILTIN_GUIDES.tool_error).toContain('error_history');
    expect(BUILTIN_GUIDES.tool_error).toContain('write_error');
    expect(BUILTIN_GUIDES.web_search).toContain('search_text');
  });

  it('joins every requested topic under a ## heading, in the order asked, duplicates once', async () => {
    const call = guideCall();
    const r = await call({ topics: ['web_search', 'tool_error', 'web_search'] });
    expect(r).toMatchObject({ ok: true, topics: ['web_search', 'tool_error'], sources: { web_search: ['builtin'], tool_error: ['builtin'] } });
    const guide = String(r.guide);
    expect(guide.startsWith('## web_search\n\n')).toBe(true);
    expect(guide.indexOf('## tool_error')).toBeGreaterThan(guide.indexOf(BUILTIN_GUIDES.web_search));
    expect(guide).toContain(BUILTIN_GUIDES.tool_error);
    expect(r.tokens).toBeGreaterThan(50);
    const all = await call({ topics: [...BUILTIN_TOPICS] });
    for (const t of BUILTIN_TOPICS) expect(String(all.guide)).toContain(`## ${t}\n`);
  });

  it('refuses an empty topic list, a single `topic` string, and unknown topics listing the known ones', async () => {
    const call = guideCall();
    expect(await call({ topics: [] })).toMatchObject({ ok: false });
    expect(await call({ topic: 'tool_error' })).toMatchObject({ ok: false });
    expect(await call({ topics: 'tool_error' })).toMatchObject({ ok: false });
    const unknown = await call({ topics: ['tool_error', 'astrology', '../secrets'] });
    expect(unknown).toMatchObject({ ok: false });
    expect(String(unknown.reason)).toContain('"astrology", "../secrets"');
    for (const t of BUILTIN_TOPICS) expect(String(unknown.reason)).toContain(t);
  });

  it('accepts the pre-rename name rag_web as web_search and says so', async () => {
    const r = await guideCall()({ topics: ['rag_web'] });
    expect(r).toMatchObject({ ok: true, topics: ['web_search'] });
    expect(String(r.guide)).toContain('## web_search');
    expect(String(r.note)).toContain('rag_web is now web_search');
  });

  it("extends a built-in topic with a person's Markdown guide, and replaces it when the file says <!-- replace -->", async () => {
    const dir = guideFolder({
      'tool_error.md': 'In this repo, run `npm run doctor` before retrying a failed build.\n',
      'ask_user.md': '<!-- replace -->\nNever ask; make the call and note it in the PR.\n',
    });
    const call = guideCall([dir]);
    const extended = await call({ topics: ['tool_error'] });
    expect(String(extended.guide)).toContain(BUILTIN_GUIDES.tool_error);
    expect(String(extended.guide)).toMatch(/write_error[^]*npm run doctor/);
    expect(extended.sources).toEqual({ tool_error: ['builtin', path.join(dir, 'tool_error.md')] });
    const replaced = await call({ topics: ['ask_user'] });
    expect(replaced.guide).toBe('## ask_user\n\nNever ask; make the call and note it in the PR.');
    expect(replaced.sources).toEqual({ ask_user: [path.join(dir, 'ask_user.md')] });
  });

  it("accepts a topic a person added, lists it among the known ones, and picks up edits without a restart", async () => {
    const dir = guideFolder({ 'release.md': 'Tag from main only.', 'Not A Topic.md': 'ignored', 'notes.txt': 'ignored' });
    const guides = new GuideService([dir, path.join(dir, 'missing-folder')]);
    expect(guides.topics()).toEqual([...BUILTIN_TOPICS, 'release']);
    const call = guideCall([dir]);
    expect(await call({ topics: ['release', 'figure'] })).toMatchObject({ ok: true, topics: ['release', 'figure'] });
    expect(String((await call({ topics: ['release'] })).guide)).toBe('## release\n\nTag from main only.');
    fs.writeFileSync(path.join(dir, 'release.md'), 'Tag from main only, after CI is green.');
    expect(String((await call({ topics: ['release'] })).guide)).toContain('after CI is green');
    const refused = await call({ topics: ['deploy'] });
    expect(String(refused.reason)).toContain('release');
    fs.rmSync(path.join(dir, 'release.md'));
    expect(await call({ topics: ['release'] })).toMatchObject({ ok: false });
  });

  it('leaves out an oversized guide file with a note instead of flooding the context', async () => {
    const dir = guideFolder({ 'figure.md': 'x'.repeat(GUIDE_MAX_BYTES + 1) });
    const r = await guideCall([dir])({ topics: ['figure'] });
    expect(r).toMatchObject({ ok: true, sources: { figure: ['builtin'] } });
    expect(String(r.note)).toContain('over the');
  });

  it('says in its description how subagent_dispatch behaves for a session that cannot dispatch', () => {
    expect(reasoningGuideTool.description).toContain('subagent_dispatch');
    expect(BUILTIN_GUIDES.subagent_dispatch.split('\n')[0]).toMatch(/cannot dispatch.*run every lookup yourself/);
  });
});
