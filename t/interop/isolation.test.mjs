// SPDX-License-Identifier: ISC
// Two clients on one upstream never receive each other's server-initiated
// requests: a shared upstream refuses what it cannot attribute, and a
// per-session upstream gives each client its own process.  A client with
// per-session upstreams has a view of its own, and a shared upstream's
// list change reaches it and its lists.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { copyFileSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, demo, sleep, bin, q } from '../lib/gateway.mjs';

let gw, dir, copy;
before(async () => {
  // 'gone' runs a copy of the demo server that a test takes away.
  dir = mkdtempSync(path.join(tmpdir(), 'mcps-isolation-'));
  copy = path.join(dir, 'demo-copy');
  copyFileSync(bin.demo, copy);
  gw = await startGateway({ servers: [demo('shared'), demo('own', 'isolation = "per-session";'),
    `{ name = "gone"; transport = "stdio"; command = [ ${q(copy)}, "--name", "gone" ]; isolation = "per-session"; }`] });
});
after(async () => { assert.equal(await gw.stop(), 0); rmSync(dir, { recursive: true, force: true }); });

async function connect(name) {
  const asked = [];
  const client = new Client({ name, version: '1' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked.push(req.params.messages[0].content.text);
    return { role: 'assistant', content: { type: 'text', text: `from ${name}` }, model: 'm' };
  });
  const transport = new StreamableHTTPClientTransport(new URL(gw.url));
  await client.connect(transport);
  return { client, asked, transport };
}
const text = (r) => r.content.map((c) => c.text).join('');

test('shared: an ambiguous origin is refused, never guessed', async () => {
  const a = await connect('a');
  const b = await connect('b');
  // Both clients have a call in flight on the shared upstream...
  const busyA = a.client.callTool({ name: 'shared__sleep', arguments: { ms: 1500 } });
  const busyB = b.client.callTool({ name: 'shared__sleep', arguments: { ms: 1500 } });
  await sleep(300);
  // ...so when the upstream asks for sampling, nobody can tell whose it is.
  // The client strategy cannot answer, so the next one declines.
  const r = await a.client.callTool({ name: 'shared__sample', arguments: { prompt: 'who am I' } });
  assert.equal(r.isError, true);
  assert.match(text(r), /User rejected sampling request/);
  assert.match(gw.log(), /sampling\/createMessage declined by the gateway: the gateway cannot tell which client/);
  assert.deepEqual(a.asked, []);
  assert.deepEqual(b.asked, []);
  await busyA;
  await busyB;
  // With one caller, the origin is known.
  assert.equal(text(await b.client.callTool({ name: 'shared__sample', arguments: { prompt: 'mine' } })), 'sampled: from b');
  assert.deepEqual(b.asked, ['mine']);
  assert.deepEqual(a.asked, []);
  assert.match(gw.log(), /cannot tell which one this is for/);
  await a.client.close();
  await b.client.close();
});

test('per-session: each client its own upstream process and requests', async () => {
  const a = await connect('a');
  const b = await connect('b');
  const busy = b.client.callTool({ name: 'own__sleep', arguments: { ms: 800 } });
  const [ra, rb] = await Promise.all([
    a.client.callTool({ name: 'own__sample', arguments: { prompt: 'for a' } }),
    b.client.callTool({ name: 'own__sample', arguments: { prompt: 'for b' } }),
  ]);
  await busy;
  assert.equal(text(ra), 'sampled: from a');
  assert.equal(text(rb), 'sampled: from b');
  assert.deepEqual(a.asked, ['for a']);
  assert.deepEqual(b.asked, ['for b']);
  // One process for the catalog plus one per session.
  const pids = await Promise.all([a, b].map(async (c) => {
    const r = await c.client.callTool({ name: 'own__stderr', arguments: { text: `pid check ${c === a ? 'a' : 'b'}` } });
    return r;
  }));
  assert.equal(pids.length, 2);
  const lines = gw.log().split('\n').filter((l) => / started .*mcp-demo-server --name own|started .*mcp-demo-server \(pid/.test(l) && l.includes('worker own'));
  assert.ok(lines.length >= 3, `catalog instance and two session instances:\n${lines.join('\n')}`);
  // Ending a session (DELETE) stops its instance.
  await a.transport.terminateSession();
  await b.transport.terminateSession();
  await a.client.close();
  await b.client.close();
  await sleep(300);
  assert.equal(gw.log().match(/worker own .*session \d+: stopping its instance/g)?.length, 2);
});

test('per-session: an instance that cannot start fails its call; the upstream stays ready', async () => {
  unlinkSync(copy);
  const a = await connect('a');
  await assert.rejects(a.client.callTool({ name: 'gone__echo', arguments: { text: 'x' } }),
    /command not found/);
  const st = gw.status().upstreams.find((u) => u.name === 'gone');
  assert.equal(st.state, 'ready');
  assert.match(st.last_error, /command not found/);
  // The session's next request starts a new instance.
  copyFileSync(bin.demo, copy);
  assert.equal(text(await a.client.callTool({ name: 'gone__echo', arguments: { text: 'back' } })), 'back');
  await a.client.close();
});

test('per-session: a shared upstream\'s list change reaches a client with a view of its own', async () => {
  const c = await connect('c');
  let changed = 0;
  c.client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
  const names = async () => (await c.client.listTools()).tools.map((t) => t.name);
  const before = await names();
  assert.ok(before.includes('own__echo') && before.includes('shared__echo'), before.join(' '));
  assert.ok(!before.includes('shared__extra'));
  const until = async (n) => {
    for (let i = 0; i < 100 && changed < n; i++) await sleep(50);
    assert.equal(changed, n, 'tools/list_changed notifications');
  };
  await c.client.callTool({ name: 'shared__toggle_tool', arguments: {} });
  await until(1);
  assert.ok((await names()).includes('shared__extra'));
  await c.client.callTool({ name: 'shared__toggle_tool', arguments: {} });
  await until(2);
  assert.ok(!(await names()).includes('shared__extra'));
  await c.client.close();
});
