import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddingConfig } from '../../../src/core/memory/semantic/embeddingClient';

/**
 * A local OpenAI-compatible /v1/embeddings server standing in for a real one: each text gets
 * `vectorOf(text)`, and `onBatch` hears how many texts each request carried.
 */
export async function startEmbeddingsServer(model: string, vectorOf: (text: string) => number[], onBatch?: (size: number) => void): Promise<{ config: EmbeddingConfig; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { input } = JSON.parse(body) as { input: string[] };
      onBatch?.(input.length);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: vectorOf(t) })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    config: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, model },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
