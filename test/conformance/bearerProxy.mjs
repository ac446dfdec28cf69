#!/usr/bin/env node
// Test-only: the MCP conformance suite cannot send a bearer token, so this loopback proxy adds
// the one `recollect serve` printed the path of, and forwards everything else untouched.
//   node bearerProxy.mjs <target origin> <token file> <port>
import fs from 'node:fs';
import http from 'node:http';

const [target, tokenFile, port] = process.argv.slice(2);
const upstream = new URL(target);
const token = fs.readFileSync(tokenFile, 'utf8').trim();

http
  .createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}`, host: upstream.host };
    const forward = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', (err) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${err.message}`));
    req.pipe(forward);
  })
  .listen(Number(port), '127.0.0.1', () => console.log(`bearer proxy on 127.0.0.1:${port} -> ${upstream.origin}`));
