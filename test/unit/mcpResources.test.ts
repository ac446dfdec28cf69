import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { sessionIdOf } from '../../src/core/history/importer';
import { isRefusal } from '../../src/core/refusal';
import { writeClaudeSession } from './helpers/claudeTranscript';
import { connectMcp } from './helpers/mcpClient';
import { openTemp, tempHome } from './helpers/tempStore';

const SESSION = '55555555-aaaa-4bbb-8ccc-000000000001';

/** A store with one archived chapter (through the person's door) and, over MCP, one imported vault note. */
async function storeWithAChapter(home: string): Promise<string> {
  const s = await openTemp(home);
  try {
    const dir = tempHome('resources-transcripts');
    writeClaudeSession(dir, SESSION, [
      { user: 'Where does the deploy script live?' },
      { tool: 'Bash', id: 'toolu_d1', input: { command: 'ls scripts' } },
      { result: 'deploy.sh\nbuild.sh', id: 'toolu_d1' },
      { assistant: 'It is scripts/deploy.sh, run by the release job.' },
    ]);
    await s.importer.importPaths([dir]);
    const r = await s.chapters.door({ sessionId: sessionIdOf('claude-code', SESSION), intent: 'continue', client: 'test' });
    if (isRefusal(r)) throw new Error(r.reason);
    return r.chapters[0]!.id;
  } finally {
    s.store.close();
  }
}

describe('MCP resources: vault notes and archived chapters (official SDK client, real server process)', () => {
  it('lists and reads them, refuses an unknown one as not found, and answers that name one link to it', async () => {
    const home = tempHome('mcp-resources');
    const chapterId = await storeWithAChapter(home);
    const mcp = await connectMcp(home, 'claude-code');
    try {
      const preview = await mcp.call('preview_import', { label: 'ops', files: [{ relativePath: 'deploy.md', markdown: '# Deploy\n\nThe release job runs scripts/deploy.sh on every tag.\n' }] });
      expect(await mcp.call('apply_import', { batchId: preview.batchId })).toMatchObject({ ok: true });

      const { resources } = await mcp.client.listResources();
      const note = resources.find((r) => r.uri.startsWith('recollect://note/') && r.name.endsWith('deploy.md'));
      const chapter = resources.find((r) => r.uri === `recollect://chapter/${chapterId}`);
      expect(note).toBeDefined();
      expect(chapter).toMatchObject({ mimeType: 'text/markdown', name: chapterId });

      const noteText = await mcp.client.readResource({ uri: note!.uri });
      expect(noteText.contents[0]).toMatchObject({ uri: note!.uri, mimeType: 'text/markdown' });
      expect((noteText.contents[0] as { text: string }).text).toContain('The release job runs scripts/deploy.sh');
      const chapterText = await mcp.client.readResource({ uri: chapter!.uri });
      expect((chapterText.contents[0] as { text: string }).text).toContain('It is scripts/deploy.sh');

      const missing = await mcp.client.readResource({ uri: 'recollect://chapter/ch_00000000' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(missing).toBeInstanceOf(McpError);
      expect((missing as McpError).code).toBe(-32002);

      const { resourceTemplates } = await mcp.client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['recollect://note/{+path}', 'recollect://chapter/{id}']);

      const found = await mcp.client.callTool({ name: 'chapters_search', arguments: { query: 'deploy' } });
      expect(found.content).toContainEqual(expect.objectContaining({ type: 'resource_link', uri: chapter!.uri }));
      const read = await mcp.client.callTool({ name: 'read_memory', arguments: { id: `note:${note!.name}` } });
      expect(read.content).toContainEqual(expect.objectContaining({ type: 'resource_link', uri: note!.uri }));
    } finally {
      await mcp.close();
    }
  });
});
