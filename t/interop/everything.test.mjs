// SPDX-License-Identifier: ISC
// @modelcontextprotocol/server-everything (the reference server, stdio) as
// an upstream: an official-SDK client through the gateway receives and
// answers sampling, elicitation and roots requests, gets progress and log
// notifications, and cancels a long call.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, q, nodeModules, sleep } from '../lib/gateway.mjs';

const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const entry = (name, extra = '') =>
  `{ name = ${q(name)}; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(everything)}, "stdio" ]; ${extra} }`;
let gw;

before(async () => {
  // ev is shared, with no strategy settings: by default it is told the
  // gateway offers sampling and elicitation; evs runs per session.
  gw = await startGateway({ servers: [entry('ev'), entry('evs', 'isolation = "per-session";')] });
  // The reference server adds its capability-dependent tools after
  // initialization and announces them with list_changed.
  await gw.waitFor((s) => s.upstreams.find((u) => u.name === 'ev').tools >= 15, 'conditional tools');
});
after(async () => { assert.equal(await gw.stop(), 0); });

async function connect() {
  const seen = { sampling: [], elicitation: [], roots: 0, logs: [] };
  const client = new Client({ name: 'everything-test', version: '1' }, {
    capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } },
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    seen.sampling.push(req.params);
    return { role: 'assistant', content: { type: 'text', text: 'sampled by the test client' }, model: 'test-model', stopReason: 'endTurn' };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.elicitation.push(req.params);
    const props = req.params.requestedSchema?.properties ?? {};
    const content = {};
    for (const [k, v] of Object.entries(props)) {
      if (v.type === 'string') content[k] = v.enum ? v.enum[0] : (v.format === 'email' ? 'ada@example.com' : v.format === 'date' ? '2026-01-01' : v.format === 'uri' ? 'https://example.com' : 'Ada');
      else if (v.type === 'integer' || v.type === 'number') content[k] = v.minimum ?? 1;
      else if (v.type === 'boolean') content[k] = true;
      else if (v.type === 'array') content[k] = v.items?.enum ? [v.items.enum[0]] : (v.items?.anyOf ? [v.items.anyOf[0].const] : []);
    }
    return { action: 'accept', content };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    seen.roots++;
    return { roots: [{ uri: 'file:///srv/project', name: 'project' }] };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { seen.logs.push(n.params); });
  const transport = new StreamableHTTPClientTransport(new URL(gw.url));
  await client.connect(transport);
  return { client, seen, transport };
}
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

test('sampling from the reference server reaches the client', async () => {
  const { client, seen } = await connect();
  const r = await client.callTool({ name: 'ev__trigger-sampling-request', arguments: { prompt: 'What is 2+2?' } });
  assert.equal(seen.sampling.length, 1);
  assert.match(JSON.stringify(seen.sampling[0].messages), /What is 2\+2\?/);
  assert.match(text(r), /sampled by the test client/);
  await client.close();
});

test('elicitation from the reference server reaches the client', async () => {
  const { client, seen } = await connect();
  const r = await client.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} });
  assert.equal(seen.elicitation.length, 1);
  assert.match(text(r), /accept/i);
  await client.close();
});

test('roots: offered to a per-session upstream only, asked of its own client', async () => {
  const { client, seen } = await connect();
  const { tools } = await client.listTools();
  assert.ok(!tools.some((t) => t.name === 'ev__get-roots-list'), 'a shared upstream is not told of roots');
  assert.ok(tools.some((t) => t.name === 'evs__get-roots-list'), 'the session\'s own instance is');
  const r = await client.callTool({ name: 'evs__get-roots-list', arguments: {} });
  assert.match(text(r), /file:\/\/\/srv\/project/);
  assert.ok(seen.roots >= 1);
  await client.close();
});

test('progress and logs from the reference server', async () => {
  const { client, seen } = await connect();
  await client.setLoggingLevel('debug');
  const progress = [];
  const r = await client.callTool({ name: 'ev__trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
    undefined, { onprogress: (p) => progress.push(p.progress) });
  assert.match(text(r), /completed/i);
  assert.equal(progress.length, 4);
  await client.callTool({ name: 'ev__toggle-simulated-logging', arguments: {} });
  for (let i = 0; i < 100 && seen.logs.length === 0; i++) await sleep(100);
  await client.callTool({ name: 'ev__toggle-simulated-logging', arguments: {} });
  assert.ok(seen.logs.length > 0, 'log notifications arrive');
  await client.close();
});

test('cancelling a long call of the reference server', async () => {
  const { client } = await connect();
  const ac = new AbortController();
  const call = client.callTool({ name: 'ev__trigger-long-running-operation', arguments: { duration: 60, steps: 60 } },
    undefined, { signal: ac.signal });
  await sleep(500);
  ac.abort('stop it');
  await assert.rejects(call, /stop it/);
  await gw.waitFor((s) => s.upstreams.every((u) => u.pending === 0), 'nothing pending', 5000);
  assert.match(text(await client.callTool({ name: 'ev__echo', arguments: { message: 'after cancel' } })), /after cancel/);
  await client.close();
});
