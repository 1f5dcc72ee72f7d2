// SPDX-License-Identifier: ISC
// Timeouts in both directions: a client call the upstream does not answer
// in time, and an upstream request the client does not answer in time.
// Both sides get clean errors or cancellations and nothing leaks.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, CancelledNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import path from 'node:path';
import { startGateway, demo, q, srcdir } from '../lib/gateway.mjs';

const catalogServer = path.join(srcdir, 't/fixtures/catalog-server.mjs');

let gw;
before(async () => {
  // 'ask' is per-session, so its instance is told its client's sampling
  // capability and asks; with the default strategies a client that does
  // not answer in time passes to decline, whose reason is the timeout.
  gw = await startGateway({ servers: [demo('slow', 'request_timeout = 1;'),
    demo('ask', 'server_request_timeout = 1; isolation = "per-session";'),
    `{ name = "cut"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(catalogServer)}, "--cut" ]; }`] });
});
after(async () => { assert.equal(await gw.stop(), 0); });

test('a call the upstream does not answer in time', async () => {
  const client = new Client({ name: 't', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  await assert.rejects(client.callTool({ name: 'slow__sleep', arguments: { ms: 5000 } }),
    (e) => e.code === -32001 && /did not answer within 1 s/.test(e.message));
  assert.equal(gw.upstream('slow').pending, 0);
  assert.equal((await client.callTool({ name: 'slow__echo', arguments: { text: 'ok' } })).content[0].text, 'ok');
  await client.close();
});

test('an upstream request the client does not answer in time', async () => {
  const cancelled = [];
  const client = new Client({ name: 't2', version: '1' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, () => new Promise(() => {}));	// never answers
  client.setNotificationHandler(CancelledNotificationSchema, (n) => cancelled.push(n.params));
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  const r = await client.callTool({ name: 'ask__sample', arguments: { prompt: 'hello?' } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /User rejected sampling request \(the client did not answer sampling\/createMessage within 1 s\)/);
  assert.equal(cancelled.length, 1, 'the client is told the request is cancelled');
  assert.match(cancelled[0].reason, /timed out/);
  await client.close();
});

// An SDK server's text cut inside a surrogate pair ("\ud83d" alone, as
// JSON.stringify writes it, which UTF-8 cannot carry) comes with U+FFFD in
// its place, as a decoder would put it; an answer the gateway cannot pass
// on at all (a byte that is not UTF-8) fails its call at once, not after
// request_timeout (300 s by default); the upstream goes on.
test('half a surrogate pair is U+FFFD; an answer that is not valid JSON-RPC fails its call at once', async () => {
  const client = new Client({ name: 't3', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  const cut = await client.callTool({ name: 'cut__cut', arguments: {} }, undefined, { timeout: 20000 });
  assert.equal(cut.content[0].text, 'smile \ufffd');
  assert.match(gw.log(), /upstream sent 1 unpaired surrogate \(a string cut inside a pair\): each passed on as U\+FFFD/);
  await assert.rejects(client.callTool({ name: 'cut__garbled', arguments: {} }, undefined, { timeout: 20000 }),
    (e) => e.code === -32000 && /upstream cut sent an answer that is not valid JSON-RPC: invalid UTF-8/.test(e.message));
  assert.equal(gw.upstream('cut').pending, 0);
  assert.equal((await client.callTool({ name: 'cut__toggle', arguments: {} })).content[0].text, 'called "toggle"');
  assert.match(gw.log(), /upstream sent an invalid answer \(invalid UTF-8[^)]*\): its call fails/);
  await client.close();
});
