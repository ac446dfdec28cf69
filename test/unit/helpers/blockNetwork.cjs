/* eslint-disable @typescript-eslint/no-require-imports -- a preload for node -r is CommonJS */
// Preloaded (node -r) into a child process and, through node's preload, into its worker threads:
// every way out to the network throws, and each attempt is appended to BLOCK_NETWORK_LOG, so a
// test can both keep a process off the network and see whether it tried.
const fs = require('node:fs');
const log = process.env.BLOCK_NETWORK_LOG;
function blocked(what) {
  return function () {
    if (log) fs.appendFileSync(log, `${what}\n`);
    throw new Error(`network blocked by the test: ${what}`);
  };
}
const net = require('node:net');
// A Unix socket or named pipe (a path, as a Recollect client reaches its store's owner) is local
// IPC, not network: it goes through; a port or host does not.
function ipcPath(args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  return (typeof first === 'string' && !/^\d+$/.test(first)) || (first && typeof first === 'object' && typeof first.path === 'string');
}
function unlessIpc(original, what) {
  const refuse = blocked(what);
  return function (...args) {
    return ipcPath(args) ? original.apply(this, args) : refuse();
  };
}
net.Socket.prototype.connect = unlessIpc(net.Socket.prototype.connect, 'net.Socket.connect');
net.connect = net.createConnection = unlessIpc(net.createConnection, 'net.connect');
require('node:tls').connect = blocked('tls.connect');
for (const mod of ['node:http', 'node:https']) {
  const m = require(mod);
  m.request = blocked(`${mod}.request`);
  m.get = blocked(`${mod}.get`);
}
const dns = require('node:dns');
dns.lookup = blocked('dns.lookup');
dns.resolve = blocked('dns.resolve');
dns.promises.lookup = blocked('dns.promises.lookup');
globalThis.fetch = blocked('fetch');
