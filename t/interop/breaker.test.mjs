// SPDX-License-Identifier: ISC
// A remote upstream's circuit breaker against failures it did not make up:
// the reference server over Streamable HTTP behind Debian's HAProxy, with
// the breaker's defaults.  While the server is away HAProxy answers every
// POST with 503: the shared upstream's calls fail and, five in a row, open
// its breaker.  Then HAProxy goes too: a per-session upstream's instance
// loses its connection and the next ones cannot connect, which ends them
// (each call starts another) and is not the breaker's, so it stays closed.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, startNodeServer, nodeModules, track, which, freePort } from '../lib/gateway.mjs';

const haproxyBin = which('haproxy');
if (!haproxyBin) {
  console.log('# SKIP: haproxy missing (Debian package haproxy)');
  process.exit(process.env.MCPS_REQUIRE_ALL ? 1 : 77);
}

const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
let gw, srv, haproxy, tmp, front;

before(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), 'mcps-breaker-'));
  srv = await startNodeServer([everything, 'streamableHttp']);
  const frontPort = await freePort();
  front = `http://127.0.0.1:${frontPort}/mcp`;
  const cfg = path.join(tmp, 'haproxy.cfg');
  writeFileSync(cfg, [
    'defaults',
    '  mode http',
    '  retries 0',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    'frontend front',
    `  bind 127.0.0.1:${frontPort}`,
    '  default_backend server',
    'backend server',
    `  server everything 127.0.0.1:${srv.port}`,
    '',
  ].join('\n'));
  execFileSync(haproxyBin, ['-c', '-q', '-f', cfg]);
  const log = openSync(path.join(tmp, 'haproxy.log'), 'a');
  haproxy = track(spawn(haproxyBin, ['-db', '-f', cfg], { detached: true, stdio: ['ignore', log, log] }));
  gw = await startGateway({ servers: [
    `{ name = "h"; transport = "http"; url = "${front}"; }`,
    `{ name = "p"; transport = "http"; url = "${front}"; isolation = "per-session"; }`,
  ] });
});

after(async () => {
  if (gw) assert.equal(await gw.stop(), 0);
  if (haproxy && haproxy.exitCode === null) {
    const done = new Promise((r) => haproxy.once('exit', r));
    try { process.kill(-haproxy.pid, 'SIGTERM'); } catch { /* gone */ }
    await done;
  }
  if (srv) await srv.stop();
  if (!process.env.KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
});

test('503s from a proxy open the breaker; instances that cannot start do not', async () => {
  const client = new Client({ name: 'breaker', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  assert.equal(text(await client.callTool({ name: 'h__echo', arguments: { message: 'up' } })), 'Echo: up');
  assert.equal(text(await client.callTool({ name: 'p__echo', arguments: { message: 'up' } })), 'Echo: up');
  await srv.stop();
  srv = null;

  for (let i = 0; i < 5; i++) {
    await assert.rejects(client.callTool({ name: 'h__echo', arguments: { message: 'x' } }),
      (e) => e.code === -32000 && /upstream h answered HTTP 503/.test(e.message), `call ${i + 1}`);
  }
  assert.equal(gw.upstream('h').breaker.state, 'open');
  await assert.rejects(client.callTool({ name: 'h__echo', arguments: { message: 'x' } }),
    (e) => e.code === -32000 && /circuit breaker open after 5 failures in a row \(last: upstream h answered HTTP 503\)/.test(e.message));

  // Without HAProxy the session's instance of p loses its connection
  // mid-call, and each next call starts an instance that cannot connect:
  // instances that end, which are not the breaker's.
  const done = new Promise((r) => haproxy.once('exit', r));
  process.kill(-haproxy.pid, 'SIGTERM');
  await done;
  const fails = [];
  for (let i = 0; i < 6; i++) {
    await assert.rejects(client.callTool({ name: 'p__echo', arguments: { message: 'x' } }),
      (e) => { fails.push(e.message); return e.code === -32000; });
  }
  assert.ok(fails.every((m) => /upstream p: .*Couldn't connect to server/.test(m)), fails.join('\n'));
  assert.equal(gw.upstream('p').state, 'ready');
  assert.equal(gw.upstream('p').breaker.state, 'closed', fails.join('\n'));
  assert.equal(gw.upstream('p').breaker.failures, 0);
  await client.close();
});
