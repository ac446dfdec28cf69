import { describe, expect, it } from 'vitest';
import { requestId } from '../../src/cli/boundedStdio';
import { RESULT_MAX_BYTES } from '../../src/core/results/resultWriter';
import { MAX_REQUEST_BYTES } from '../../src/core/tools/requestLimit';
import { writeResultTool } from '../../src/core/tools/writeResult';
import { connectMcp } from './helpers/mcpClient';
import { connectHttp, startServe } from './helpers/mcpHttp';
import { tempHome } from './helpers/tempStore';

/**
 * Issue 21, item 7: a request over 10 MiB on stdio used to close the connection silently (the
 * SDK's read buffer). Now it is refused with its size and the limit, and the same connection
 * answers the next call; over HTTP the refusal is a 413.
 */
describe('the MCP request bound', () => {
  const overBound = 'x'.repeat(MAX_REQUEST_BYTES + 1024 * 1024);

  it('refuses a request over the bound on stdio with its measured size, and the connection answers the next call', async () => {
    const home = tempHome('request-limit');
    const mcp = await connectMcp(home, 'claude-code');
    try {
      const refused = await mcp.client.callTool({ name: 'write_result', arguments: { content: overBound } }).then(
        () => undefined,
        (err: unknown) => err as Error & { code?: number; data?: { bytes: number; limit: number } },
      );
      expect(refused?.code).toBe(-32600);
      expect(refused?.message).toMatch(/the request is [\d,]+ bytes \(11 MiB\) of JSON, over the 10,485,760-byte \(10 MiB\) limit/);
      expect(refused?.data?.limit).toBe(MAX_REQUEST_BYTES);
      expect(refused?.data?.bytes).toBeGreaterThan(overBound.length);
      // The same connection goes on.
      expect(await mcp.call('memory_status', {})).toMatchObject({ ok: true });
      // Content within the request bound but over write_result's own limit gets the tool's refusal.
      const long = await mcp.call('write_result', { content: 'y'.repeat(RESULT_MAX_BYTES + 1) });
      expect(long).toMatchObject({ ok: false, budget: { limit: RESULT_MAX_BYTES, used: RESULT_MAX_BYTES + 1 } });
    } finally {
      await mcp.close();
    }
  }, 120_000);

  it('refuses a body over the bound over HTTP with a 413 that gives its size, and the session goes on', async () => {
    const home = tempHome('request-limit-http');
    const serve = await startServe(home);
    try {
      const mcp = await connectHttp(serve.url, serve.token, 'codex');
      try {
        const refused = await mcp.client.callTool({ name: 'write_result', arguments: { content: overBound } }).then(
          () => undefined,
          (err: unknown) => err as Error,
        );
        expect((refused as { code?: number } | undefined)?.code).toBe(413);
        expect(refused?.message).toMatch(/the request is [\d,]+ bytes \(11 MiB\) of JSON, over the 10,485,760-byte \(10 MiB\) limit/);
        expect(await mcp.call('memory_status', {})).toMatchObject({ ok: true });
      } finally {
        await mcp.close();
      }
    } finally {
      await serve.stop();
    }
  }, 120_000);

  it('states the real limits in write_result\'s description', () => {
    const content = (writeResultTool.input.shape.content as { description?: string }).description ?? '';
    expect(content).toContain('up to 8 MiB of UTF-8');
    expect(content).toContain('at most 10 MiB');
  });

  it('finds the id of an oversized request at either end of its line', () => {
    expect(requestId('{"method":"tools/call","params":{"arguments":{"content":"xx', 'xx"}},"jsonrpc":"2.0","id":7}')).toBe(7);
    expect(requestId('{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"x":"', '"}}')).toBe('a-1');
    // An "id" inside the content is escaped, and a notification has none.
    expect(requestId('{"jsonrpc":"2.0","method":"notifications/x","params":{"c":"\\"id\\":3', '\\"id\\":4}"}}')).toBeUndefined();
  });
});
