// SPDX-License-Identifier: ISC
// An upstream that sends faster than the supervisor takes its messages is
// held back by its worker, which stops reading it while 64 MiB wait for
// the supervisor, instead of queueing without bound; nothing is lost.
// The supervisor is stopped (SIGSTOP) while a server floods its caller
// with log messages, and writes down how many went out: an SDK server over
// stdio, the same behind the ws package's WebSocket bridge, and over
// Streamable HTTP the hand-written fault server (no SDK server waits for
// its socket to drain), whose worker pauses curl, and over legacy HTTP+SSE
// the SDK's SSEServerTransport (the fixture's flood waits for the event
// stream's drain), whose worker pauses curl too.
// Once the supervisor goes on, the 64 MiB come at once, more than an SDK
// client reads as fast: the supervisor cuts its stream when it is 4 MiB
// behind, and the client resumes it, but what passed the replay buffer
// is lost, which the supervisor logs (event ranges).  So every message
// either reaches the client, in order, or is one the log names.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, startNodeServer, q, srcdir, sleep } from '../lib/gateway.mjs';

const catalogServer = path.join(srcdir, 't/fixtures/catalog-server.mjs');

let gw, faults, wsUp, sseUp;
before(async () => {
  sseUp = await startNodeServer([catalogServer, '--flood', '--sse']);
  faults = await startNodeServer([path.join(srcdir, 't/fixtures/http-faults.mjs')]);
  wsUp = await startNodeServer([path.join(srcdir, 't/fixtures/ws-upstream.mjs'), '--', process.execPath, catalogServer, '--flood']);
  gw = await startGateway({ servers: [
    `{ name = "flood"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(catalogServer)}, "--flood" ]; }`,
    `{ name = "faults"; transport = "http"; url = "http://127.0.0.1:${faults.port}/mcp"; }`,
    `{ name = "wsflood"; transport = "ws"; url = "ws://127.0.0.1:${wsUp.port}/"; }`,
    `{ name = "sseflood"; transport = "sse"; url = "http://127.0.0.1:${sseUp.port}/sse"; }`] });
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  await faults.stop();
  await wsUp.stop();
  await sseUp.stop();
});

// How many messages the server has written so far.
function sent(mark) {
  try { return Number(readFileSync(mark, 'utf8')); } catch { return 0; }
}

// Flood through upstream name's tool flood while the supervisor is stopped.
async function flood(name) {
  const count = 3000, size = 64 * 1024;	// 192 MiB in all
  const mark = path.join(gw.dir, `mark-${name}`);
  let got = 0, prev = -1, disorder = null;
  const client = new Client({ name: `flooded-${name}`, version: '1' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const i = Number(String(n.params.data).split(' ')[0]);
    if (i <= prev && disorder === null) disorder = `message ${i} came after ${prev}`;
    prev = i;
    got++;
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  const before = gw.log().length;
  const call = client.callTool({ name: `${name}__flood`, arguments: { count, size, mark } }, undefined, { timeout: 300000 });
  while (got === 0) await sleep(10);
  process.kill(gw.pid, 'SIGSTOP');
  let held;
  try {
    // The server goes on until its worker stops reading it: wait until
    // its count has not moved for 2 s (or it sent everything).
    let last = -1, since = Date.now();
    for (;;) {
      const n = sent(mark);
      if (n !== last) { last = n; since = Date.now(); }
      if (n >= count || Date.now() - since > 2000) break;
      await sleep(100);
    }
    held = last;
  } finally {
    process.kill(gw.pid, 'SIGCONT');
  }
  // 64 MiB are 1,024 of these messages; the pipe or the sockets hold a
  // few more.  Without the bound the worker read all 3,000.
  assert.ok(held < 1500, `the server sent ${held} of ${count} messages while the supervisor was stopped`);
  const r = await call;
  assert.equal(r.content[0].text, `flooded ${count}`);
  assert.equal(disorder, null);
  assert.equal(prev, count - 1, 'the last message arrived');
  const log = gw.log().slice(before);
  let lost = 0;
  for (const m of log.matchAll(/stream \d+ lost events (\d+) to (\d+) \(replay buffer overflowed\)/g)) {
    lost += Number(m[2]) - Number(m[1]) + 1;
  }
  assert.equal(got + lost, count, `${got} arrived, ${lost} named lost by the supervisor`);
  assert.match(log, new RegExp(`upstream ${name}: the supervisor is \\d+ bytes behind: reading the upstream paused`));
  assert.match(log, new RegExp(`upstream ${name}: the supervisor caught up: reading the upstream again`));
  await client.close();
}

test('a stdio upstream faster than the supervisor waits; every message is passed on', async () => {
  await flood('flood');
});

// Over Streamable HTTP curl pauses the response; TCP holds the server.
test('a Streamable HTTP upstream faster than the supervisor waits; every message is passed on', async () => {
  await flood('faults');
});

// Over WebSocket the worker stops reading the socket; TCP holds the
// bridge (the ws package's, which then stops reading its stdio server).
test('a WebSocket upstream faster than the supervisor waits; every message is passed on', async () => {
  await flood('wsflood');
});

// Over legacy SSE the event stream is a response curl reads: curl pauses
// it, and TCP holds the server.
test('a legacy SSE upstream faster than the supervisor waits; every message is passed on', async () => {
  await flood('sseflood');
});
