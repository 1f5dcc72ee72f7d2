// SPDX-License-Identifier: ISC
// A 2025 client (SDK v1, Streamable HTTP) through the gateway to a strict
// 2026-07-28 server (SDK v2, t/fixtures/modern-server.mjs), over HTTP and
// over stdio.  The server asks for input the 2026 way, input_required; the
// client only knows real server-to-client requests.  The gateway sends
// them on the call's stream, collects the answers and retries the call,
// round after round.  Also: progress and logs, a resources/subscribe and
// list changes from the server's subscriptions/listen, cancellation, the
// x-mcp-header mirror, and the era found or forced per upstream (a strict
// server with era = "2025" fails; the SDK's dual-era server is found
// modern, or served as 2025 when forced).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
  LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import path from 'node:path';
import { startGateway, startNodeServer, q, sleep, srcdir } from '../lib/gateway.mjs';
import { modernServer, modernStdio } from '../lib/modern.mjs';

let gw, strict, dual, ws;
const fixture = (f) => path.join(srcdir, 't/fixtures', f);

before(async () => {
  strict = await modernServer('--legacy', 'reject');
  dual = await modernServer('--legacy', 'stateless');
  // A strict 2026-07-28 stdio server behind a WebSocket (the ws package).
  ws = await startNodeServer([fixture('ws-upstream.mjs'), '--', process.execPath, fixture('modern-server.mjs'), 'stdio']);
  gw = await startGateway({
    servers: [
      `{ name = "mh"; transport = "http"; url = ${q(strict.url)}; }`,
      modernStdio('ms'),
      `{ name = "dual"; transport = "http"; url = ${q(dual.url)}; }`,
      `{ name = "dual25"; transport = "http"; url = ${q(dual.url)}; era = "2025"; }`,
      `{ name = "strict25"; transport = "http"; url = ${q(strict.url)}; era = "2025"; max_failures = 1; }`,
      `{ name = "mw"; transport = "ws"; url = "ws://127.0.0.1:${ws.port}/mcp"; }`,
      `{ name = "quiet"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(fixture('quiet-legacy.mjs'))} ]; }`,
      `{ name = "dies"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(fixture('quiet-legacy.mjs'))}, "--exit-on-probe" ]; prefix = "dies__"; }`,
      `{ name = "refuser"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(fixture('quiet-legacy.mjs'))}, "--refuse-probe" ]; prefix = "refuser__"; }`,
    ],
    wait: false,
  });
  await gw.waitFor((s) => ['mh', 'ms', 'mw', 'quiet', 'dies', 'dual', 'dual25', 'refuser'].every((n) => s.upstreams.find((u) => u.name === n).state === 'ready'), 'upstreams ready');
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  strict.stop();
  dual.stop();
  await ws.stop();
});

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function connect({ failSampling = false, caps = { sampling: {}, elicitation: { form: {} }, roots: {} } } = {}) {
  const seen = { sampling: 0, elicitation: 0, roots: 0, logs: [], updated: [], listChanged: 0 };
  const client = new Client({ name: 'legacy-test', version: '1' }, { capabilities: caps });
  if (caps.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      seen.sampling++;
      if (failSampling) throw new Error('no model here');
      return { role: 'assistant', content: { type: 'text', text: 'sampled by SDK v1' }, model: 'm', stopReason: 'endTurn' };
    });
  }
  if (caps.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async () => {
      seen.elicitation++;
      return { action: 'accept', content: { name: 'Grace', ok: true, yes: true } };
    });
  }
  if (caps.roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.roots++;
      return { roots: [{ uri: 'file:///srv/legacy', name: 'legacy' }] };
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { seen.logs.push(n.params); });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { seen.updated.push(n.params); });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.listChanged++; });
  const transport = new StreamableHTTPClientTransport(new URL(gw.url));
  await client.connect(transport);
  return { client, seen };
}

test('the era is found per upstream, or forced', async () => {
  const s = gw.status();
  const era = (n) => s.upstreams.find((u) => u.name === n).era;
  assert.equal(era('mh'), '2026');
  assert.equal(era('ms'), '2026', 'over stdio, by the server/discover probe');
  assert.equal(era('mw'), '2026', 'over WebSocket, by the server/discover probe');
  assert.equal(era('quiet'), '2025', 'a probe with no answer is a 2025 server');
  assert.match(gw.log(), /no answer to server\/discover within 5000 ms/);
  // One that exits on the probe: its next worker does not probe again.
  assert.equal(era('dies'), '2025');
  assert.equal(gw.upstream('dies').restarts, 1);
  assert.match(gw.log(), /during the server\/discover probe: taken for a 2025 server/);
  assert.equal(era('dual'), '2026', 'the dual-era server answers the modern probe');
  assert.equal(era('dual25'), '2025');
  // -32022 to the probe, naming a 2025 version: spoken to in 2025, at once.
  assert.equal(era('refuser'), '2025');
  assert.equal(gw.upstream('refuser').restarts, 0);
  // mcpctl status prints the column and the instance line.
  const table = gw.mcpctl('status');
  assert.match(table, /^mcp-supervisord \S+, instance \S+, pid /m);
  assert.match(table, /^NAME +TRANSPORT +STATE .* CALLS +ERA +LAST ERROR$/m);
  assert.match(table, /^mh +http +ready( +\S+){8} +2026 +-$/m);
  assert.match(table, /^quiet +stdio +ready( +\S+){8} +2025 +-$/m);
  // A strict server refuses initialize: era = "2025" cannot work, and says so.
  await gw.waitFor((st) => st.upstreams.find((u) => u.name === 'strict25').state === 'failed', 'strict25 failed', 20000);
  assert.match(gw.upstream('strict25').last_error, /initialize/);
  const { client } = await connect();
  assert.match(text(await client.callTool({ name: 'quiet__echo', arguments: {} })), /quiet echo/);
  for (const n of ['mh', 'ms', 'mw', 'dual', 'dual25']) {
    assert.match(text(await client.callTool({ name: `${n}__echo`, arguments: { text: `via ${n}` } })), new RegExp(`via ${n}`));
  }
  await client.close();
});

for (const up of ['mh', 'ms', 'mw']) {
  test(`${up}: sampling, elicitation and roots of a strict 2026-07-28 server, answered as real requests`, async () => {
    const { client, seen } = await connect();
    assert.match(text(await client.callTool({ name: `${up}__ask-llm`, arguments: { question: '2+2?' } })), /LLM said: sampled by SDK v1/);
    assert.equal(seen.sampling, 1);
    assert.match(text(await client.callTool({ name: `${up}__ask-name`, arguments: {} })), /Hello, Grace/);
    assert.equal(seen.elicitation, 1);
    assert.match(text(await client.callTool({ name: `${up}__ask-roots`, arguments: {} })), /file:\/\/\/srv\/legacy/);
    assert.equal(seen.roots, 1);
    // Two rounds, the server's state between them; a round with state only.
    assert.match(text(await client.callTool({ name: `${up}__two-step`, arguments: {} })), /two steps done: sampled by SDK v1/);
    assert.equal(seen.elicitation, 2);
    assert.equal(seen.sampling, 2);
    assert.match(text(await client.callTool({ name: `${up}__state-only`, arguments: {} })), /resumed with state 1/);
    // prompts/get too.
    const p = await client.getPrompt({ name: `${up}__ask-prompt` });
    assert.match(JSON.stringify(p.messages), /Write to Grace/);
    assert.equal(seen.elicitation, 3);
    await client.close();
  });
}

test('a round that fails ends the call: isError for tools/call, an error for prompts/get', async () => {
  const { client, seen } = await connect({ failSampling: true });
  const r = await client.callTool({ name: 'mh__ask-llm', arguments: { question: 'x' } });
  assert.equal(r.isError, true);
  assert.match(text(r), /no model here/);
  assert.equal(seen.sampling, 1);
  await client.close();
  // A client without elicitation: the strategies (client only) refuse.
  const { client: c2 } = await connect({ caps: {} });
  await assert.rejects(c2.getPrompt({ name: 'mh__ask-prompt' }), /elicitation|input/i);
  await c2.close();
});

test('progress and logs of a modern upstream reach the 2025 client', async () => {
  const { client, seen } = await connect();
  await client.setLoggingLevel('info');
  const progress = [];
  const r = await client.callTool({ name: 'mh__slow', arguments: { steps: 3, ms: 20 } }, undefined,
    { onprogress: (p) => progress.push(p.progress) });
  assert.match(text(r), /slow done after 3/);
  assert.deepEqual(progress, [1, 2, 3]);
  for (let i = 0; i < 50 && seen.logs.length < 3; i++) await sleep(20);
  assert.deepEqual(seen.logs.map((l) => l.data), ['step 1', 'step 2', 'step 3']);
  await client.close();
});

test('resources/subscribe and list changes come from the upstream\'s subscriptions/listen', async () => {
  const { client, seen } = await connect();
  await client.subscribeResource({ uri: 'res://counter' });
  // The gateway re-opens its listen with the URI: bump until it shows.
  for (let i = 0; i < 50 && seen.updated.length === 0; i++) {
    assert.match(text(await client.callTool({ name: 'mh__bump', arguments: {} })), /counter/);
    await sleep(100);
  }
  assert.ok(seen.updated.length > 0);
  assert.ok(seen.updated.every((u) => u.uri === 'res://counter'));
  assert.equal(JSON.stringify(seen.updated[0]).includes('subscriptionId'), false, 'the upstream\'s subscription id is not relayed');
  const before = (await client.listTools()).tools.length;
  await client.callTool({ name: 'mh__add-tool', arguments: {} });
  for (let i = 0; i < 100 && seen.listChanged === 0; i++) await sleep(50);
  assert.ok(seen.listChanged >= 1);
  await gw.waitFor(() => true, 'x', 10);
  let after = before;
  for (let i = 0; i < 100 && after === before; i++) {
    after = (await client.listTools()).tools.length;
    if (after === before) await sleep(50);
  }
  assert.ok(after > before, `a new tool is listed (${before} -> ${after})`);
  await client.close();
});

test('cancellation of a call reaches the modern upstream', async () => {
  const { client } = await connect();
  const ac = new AbortController();
  const call = client.callTool({ name: 'mh__slow', arguments: { steps: 100, ms: 50 } }, undefined, { signal: ac.signal });
  await sleep(300);
  ac.abort('stop');
  await assert.rejects(call);
  let stats;
  for (let i = 0; i < 100; i++) {
    stats = JSON.parse(text(await client.callTool({ name: 'mh__stats', arguments: {} })));
    if (stats.cancelled > 0) break;
    await sleep(50);
  }
  assert.ok(stats.cancelled > 0, 'the upstream saw the cancellation');
  await client.close();
});

test('an argument marked x-mcp-header is mirrored as Mcp-Param-*', async () => {
  const { client } = await connect();
  assert.match(text(await client.callTool({ name: 'mh__with-header', arguments: { region: 'eu-west', query: 'q' } })), /region eu-west/);
  const stats = JSON.parse(text(await client.callTool({ name: 'mh__stats', arguments: {} })));
  assert.ok(stats.headers.includes('eu-west'), JSON.stringify(stats.headers));
  await client.close();
});
