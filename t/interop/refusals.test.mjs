// SPDX-License-Identifier: ISC
// A request refused before its body is read (too large: 413; without a
// token: 401) reaches a client that is still sending it, Node's fetch
// (undici): the gateway shuts its side, reads and drops the rest, then
// closes, rather than resetting the connection under the response.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, demo } from '../lib/gateway.mjs';

const TOKEN = 'refusals-test-token-0123456789';
let gw, locked;
before(async () => {
  gw = await startGateway({ servers: [demo('d')] });
  locked = await startGateway({ servers: [demo('d')], globals: `auth_tokens = [ "${TOKEN}" ];` });
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  assert.equal(await locked.stop(), 0);
});

// A tools/call whose arguments make it bytes long.
const body = (bytes) => {
  const head = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"d__echo","arguments":{"text":"';
  const tail = '"}}}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
};

const send = (url, text) => fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: text,
});

test('a body over max_body (8 MiB): 413 and its JSON-RPC error, every time', async () => {
  const big = body(12 * 1024 * 1024);
  for (let i = 0; i < 5; i++) {
    const r = await send(gw.url, big);
    assert.equal(r.status, 413);
    const j = await r.json();
    assert.equal(j.error.code, -32600);
  }
});

test('a large body without a token: 401, every time', async () => {
  const big = body(4 * 1024 * 1024);
  for (let i = 0; i < 5; i++) {
    const r = await send(locked.url, big);
    assert.equal(r.status, 401);
    await r.arrayBuffer();
  }
});
