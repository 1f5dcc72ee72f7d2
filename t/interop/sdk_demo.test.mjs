// SPDX-License-Identifier: ISC
// The official TypeScript SDK client through the gateway, against two
// mcp-demo-server upstreams: catalog, calls, and every kind of
// server-initiated traffic in both directions.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
  LoggingMessageNotificationSchema, ToolListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema, ElicitationCompleteNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, demo, sleep } from '../lib/gateway.mjs';

let gw;

// A client that answers sampling, elicitation and roots, and records
// what it was asked and told.
async function connect(name, { capabilities } = {}) {
  const seen = { sampling: [], elicitation: [], roots: 0, logs: [], toolsChanged: 0, updated: [], completed: [] };
  const client = new Client({ name, version: '1.0.0' }, {
    capabilities: capabilities ?? { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } },
  });
  if (!capabilities || capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      seen.sampling.push(req.params);
      return { role: 'assistant', content: { type: 'text', text: `answer from ${name}` }, model: 'test-model', stopReason: 'endTurn' };
    });
  }
  if (!capabilities || capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      seen.elicitation.push(req.params);
      if (req.params.mode === 'url') return { action: 'accept' };
      return { action: 'accept', content: { name: name, age: 42 } };
    });
  }
  if (!capabilities || capabilities.roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.roots++;
      return { roots: [{ uri: `file:///work/${name}`, name }] };
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { seen.logs.push(n.params); });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.toolsChanged++; });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { seen.updated.push(n.params.uri); });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => { seen.completed.push(n.params.elicitationId); });
  const transport = new StreamableHTTPClientTransport(new URL(gw.url));
  await client.connect(transport);
  return { client, seen, transport };
}

const text = (r) => r.content.map((c) => c.text).join('');

before(async () => {
  // Roots belong to one client: only a per-session upstream is offered them.
  gw = await startGateway({ servers: [demo('demo'), demo('two', 'prefix = "t_"; isolation = "per-session";')] });
});

after(async () => {
  const code = await gw.stop();
  assert.equal(code, 0, 'the daemon exits cleanly');
});

test('merged catalog with prefixes', async () => {
  const { client } = await connect('catalog');
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['demo__echo', 'demo__sample', 't_echo', 't_add']) assert.ok(names.includes(n), n);
  assert.ok(!names.includes('echo'), 'no unprefixed names');
  const { prompts } = await client.listPrompts();
  assert.ok(prompts.some((p) => p.name === 'demo__greeting'));
  const { resources } = await client.listResources();
  assert.ok(resources.some((r) => r.uri === 'demo://readme'));
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.ok(resourceTemplates.some((r) => r.uriTemplate === 'demo://item/{id}'));
  await client.close();
});

test('calls route to the right upstream', async () => {
  const { client } = await connect('calls');
  assert.equal(text(await client.callTool({ name: 'demo__echo', arguments: { text: 'héllo "quoted"' } })), 'héllo "quoted"');
  const sum = await client.callTool({ name: 't_add', arguments: { a: 2, b: 40 } });
  assert.deepEqual(sum.structuredContent, { sum: 42 });
  const fail = await client.callTool({ name: 'demo__fail', arguments: {} });
  assert.equal(fail.isError, true);
  const read = await client.readResource({ uri: 'demo://item/7' });
  assert.equal(read.contents[0].text, 'item 7');
  const prompt = await client.getPrompt({ name: 't_greeting', arguments: { name: 'Ada' } });
  assert.match(prompt.messages[0].content.text, /Hello, Ada/);
  const comp = await client.complete({ ref: { type: 'ref/prompt', name: 'demo__greeting' }, argument: { name: 'name', value: 'Gr' } });
  assert.deepEqual(comp.completion.values, ['Grace']);
  await assert.rejects(client.callTool({ name: 'nope__tool', arguments: {} }), /unknown tool/);
  await client.close();
});

test('sampling, elicitation and roots reach the calling client and back', async () => {
  const { client, seen } = await connect('alice');
  assert.equal(text(await client.callTool({ name: 'demo__sample', arguments: { prompt: 'say hi' } })), 'sampled: answer from alice');
  assert.equal(seen.sampling.length, 1);
  assert.equal(seen.sampling[0].messages[0].content.text, 'say hi');
  const el = text(await client.callTool({ name: 'demo__elicit', arguments: {} }));
  assert.match(el, /action=accept/);
  assert.match(el, /"name":"alice"/);
  assert.equal(seen.elicitation[0].mode, 'form');
  const url = text(await client.callTool({ name: 'demo__elicit_url', arguments: {} }));
  assert.match(url, /action=accept/);
  assert.equal(seen.elicitation[1].mode, 'url');
  await sleep(100);
  assert.deepEqual(seen.completed, [seen.elicitation[1].elicitationId], 'the URL elicitation\'s completion reaches its client');
  const roots = text(await client.callTool({ name: 't_roots', arguments: {} }));
  assert.match(roots, /file:\/\/\/work\/alice/);
  assert.equal(text(await client.callTool({ name: 'demo__ping_client', arguments: {} })), 'pong');
  await client.close();
});

test('a client without a capability is never asked', async () => {
  const { client, seen } = await connect('nosampling', { capabilities: { roots: {} } });
  const r = await client.callTool({ name: 'demo__sample', arguments: { prompt: 'x' } });
  assert.equal(r.isError, true);
  assert.equal(seen.sampling.length, 0);
  await client.close();
});

test('progress and log notifications arrive during the call', async () => {
  const { client, seen } = await connect('progress');
  await client.setLoggingLevel('info');
  const progress = [];
  const r = await client.callTool({ name: 'demo__sleep', arguments: { ms: 300, steps: 3 } }, undefined,
    { onprogress: (p) => progress.push(p) });
  assert.equal(text(r), 'slept 300 ms');
  assert.deepEqual(progress.map((p) => p.progress), [1, 2, 3]);
  await client.callTool({ name: 'demo__log', arguments: { level: 'warning', message: 'careful', count: 2 } });
  await client.callTool({ name: 'demo__log', arguments: { level: 'debug', message: 'too chatty' } });
  await sleep(100);
  assert.deepEqual(seen.logs.map((l) => l.data), ['careful', 'careful'], 'debug is below the requested level');
  await client.close();
});

test('cancelling a long call', async () => {
  const { client } = await connect('cancel');
  const ac = new AbortController();
  const call = client.callTool({ name: 'demo__sleep', arguments: { ms: 60000 } }, undefined, { signal: ac.signal });
  await sleep(200);
  ac.abort('changed my mind');
  await assert.rejects(call, /changed my mind/);
  await gw.waitFor((s) => s.upstreams.every((u) => u.pending === 0), 'no pending requests', 5000);
  assert.equal(text(await client.callTool({ name: 'demo__echo', arguments: { text: 'still fine' } })), 'still fine');
  await client.close();
});

test('the same request ids from two clients at once stay apart', async () => {
  const a = await connect('a');
  const b = await connect('b');
  const calls = [];
  for (let i = 0; i < 20; i++) {
    calls.push(a.client.callTool({ name: 'demo__echo', arguments: { text: `a${i}` } }).then((r) => assert.equal(text(r), `a${i}`)));
    calls.push(b.client.callTool({ name: 'demo__echo', arguments: { text: `b${i}` } }).then((r) => assert.equal(text(r), `b${i}`)));
  }
  await Promise.all(calls);
  await a.client.close();
  await b.client.close();
});

test('list_changed reaches every session; subscriptions only subscribers', async () => {
  const a = await connect('sub-a');
  const b = await connect('sub-b');
  await a.client.subscribeResource({ uri: 'demo://counter' });
  await b.client.callTool({ name: 'demo__touch', arguments: { uri: 'demo://counter' } });
  await b.client.callTool({ name: 'demo__toggle_tool', arguments: {} });
  await sleep(300);
  assert.deepEqual(a.seen.updated, ['demo://counter']);
  assert.deepEqual(b.seen.updated, []);
  assert.ok(a.seen.toolsChanged >= 1 && b.seen.toolsChanged >= 1, 'both told the tools changed');
  const { tools } = await b.client.listTools();
  assert.ok(tools.some((t) => t.name === 'demo__extra'));
  await b.client.callTool({ name: 'demo__toggle_tool', arguments: {} });
  await a.client.unsubscribeResource({ uri: 'demo://counter' });
  await a.client.close();
  await b.client.close();
});
