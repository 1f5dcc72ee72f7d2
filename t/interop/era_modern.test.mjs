// SPDX-License-Identifier: ISC
// 2026-07-28 on both sides: an SDK v2 client drives a strict 2026-07-28
// server (SDK v2) through the gateway, which passes input_required,
// requestState and the headers through; a tampered or replayed
// requestState is refused (by the server's own HMAC codec and its
// single-use check: the gateway hands it over byte for byte).  Also the
// gateway's own 2026-07-28 front, checked request by request: the
// envelope and header ladder with its statuses, server/discover, cache
// hints, subscriptions/listen, logs only for a request that asks, and a
// 2025 client on the same listener.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import path from 'node:path';
import { startGateway, q, sleep, srcdir } from '../lib/gateway.mjs';
import { post, modernServer, envelope, MODERN } from '../lib/modern.mjs';

let gw, up;

before(async () => {
  up = await modernServer('--legacy', 'reject');
  gw = await startGateway({ globals: 'cache_ttl = 30;', servers: [
    // Strategies of the client alone: what the client did not declare
    // is not the gateway's to answer.
    `{ name = "m"; transport = "http"; url = ${q(up.url)}; elicitation = [ "client" ]; sampling = [ "client" ]; }`,
    // The same server with the default strategies (client, then decline),
    // and sampling that another upstream's tool answers for a client that
    // cannot.
    `{ name = "md"; transport = "http"; url = ${q(up.url)}; }`,
    `{ name = "mt"; transport = "http"; url = ${q(up.url)}; sampling = [ "client", "tool:ask/complete" ]; }`,
    // A 2025 stdio upstream whose requests name no call.
    `{ name = "ask"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(path.join(srcdir, 't/fixtures/sampling-server.mjs'))} ]; }`,
  ] });
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  up.stop();
});

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function connect() {
  const seen = { sampling: 0, elicitation: 0, roots: 0 };
  const client = new Client({ name: 'modern-modern', version: '1' }, {
    capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
    versionNegotiation: { mode: { pin: MODERN } },
  });
  client.setRequestHandler('sampling/createMessage', async () => {
    seen.sampling++;
    return { role: 'assistant', content: { type: 'text', text: 'sampled by SDK v2' }, model: 'm', stopReason: 'endTurn' };
  });
  client.setRequestHandler('elicitation/create', async () => {
    seen.elicitation++;
    return { action: 'accept', content: { name: 'Lin', ok: true, yes: true } };
  });
  client.setRequestHandler('roots/list', async () => {
    seen.roots++;
    return { roots: [{ uri: 'file:///srv/m', name: 'm' }] };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return { client, seen };
}

test('a pinned client drives a strict 2026-07-28 server through the gateway', async () => {
  const { client, seen } = await connect();
  assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
  assert.equal(gw.upstream('m').era, '2026');
  assert.match(text(await client.callTool({ name: 'm__ask-llm', arguments: { question: '1+1' } })), /LLM said: sampled by SDK v2/);
  assert.match(text(await client.callTool({ name: 'm__ask-name', arguments: {} })), /Hello, Lin/);
  assert.match(text(await client.callTool({ name: 'm__ask-roots', arguments: {} })), /file:\/\/\/srv\/m/);
  assert.match(text(await client.callTool({ name: 'm__two-step', arguments: {} })), /two steps done: sampled by SDK v2/);
  assert.match(text(await client.callTool({ name: 'm__state-only', arguments: {} })), /resumed with state 1/);
  assert.deepEqual(seen, { sampling: 2, elicitation: 2, roots: 1 });
  const p = await client.getPrompt({ name: 'm__ask-prompt' });
  assert.match(JSON.stringify(p.messages), /Write to Lin/);
  const res = await client.readResource({ uri: 'res://counter' });
  assert.match(res.contents[0].text, /^\d+$/);
  assert.match(text(await client.callTool({ name: 'm__with-header', arguments: { region: 'ap-south' } })), /region ap-south/);
  assert.equal(text(await client.callTool({ name: 'm__with-header', arguments: { region: '' } })), 'region ');
  await client.close();
});

test('requestState passes through byte for byte: tampered or replayed, the server refuses it', async () => {
  let r = await post(gw.url, 'tools/call', { name: 'm__once', arguments: {} }, { caps: { elicitation: {} } });
  const ir = r.body.result;
  assert.equal(ir.resultType, 'input_required');
  assert.match(ir.requestState, /^v1\./, 'the upstream\'s own token, untouched');
  const [key] = Object.keys(ir.inputRequests);
  const answer = { [key]: { action: 'accept', content: { yes: true } } };
  const tampered = ir.requestState.slice(0, 6) + (ir.requestState[6] === 'A' ? 'B' : 'A') + ir.requestState.slice(7);
  r = await post(gw.url, 'tools/call', { name: 'm__once', arguments: {}, inputResponses: answer, requestState: tampered }, { caps: { elicitation: {} } });
  assert.equal(r.body.error?.code, -32602, JSON.stringify(r.body));
  r = await post(gw.url, 'tools/call', { name: 'm__once', arguments: {}, inputResponses: answer, requestState: ir.requestState }, { caps: { elicitation: {} } });
  assert.match(text(r.body.result), /confirmed once/);
  // The SDK turns the tool's refusal into an isError result.
  r = await post(gw.url, 'tools/call', { name: 'm__once', arguments: {}, inputResponses: answer, requestState: ir.requestState }, { caps: { elicitation: {} } });
  assert.equal(r.body.result?.isError, true, JSON.stringify(r.body));
  assert.match(text(r.body.result), /requestState replayed/);
});

test('the ladder: envelope, headers, version and method, at the specification\'s statuses', async () => {
  const call = { name: 'm__echo', arguments: { text: 'x' } };
  let r = await post(gw.url, 'tools/call', call, { headers: { 'Mcp-Name': null } });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020);
  r = await post(gw.url, 'tools/call', call, { headers: { 'Mcp-Name': 'm__other' } });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020);
  r = await post(gw.url, 'tools/call', call, { headers: { 'Mcp-Method': 'tools/list' } });
  assert.equal(r.body.error.code, -32020);
  r = await post(gw.url, 'tools/call', call, { headers: { 'MCP-Protocol-Version': null } });
  assert.equal(r.body.error.code, -32020);
  r = await post(gw.url, 'tools/list', {}, { meta: { 'io.modelcontextprotocol/protocolVersion': '2027-03-01' }, headers: { 'MCP-Protocol-Version': '2027-03-01' } });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32022);
  assert.ok(r.body.error.data.supported.includes(MODERN));
  assert.equal(r.body.error.data.requested, '2027-03-01');
  r = await post(gw.url, 'tools/list', {}, { meta: { 'io.modelcontextprotocol/clientCapabilities': 'none' } });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32602);
  r = await post(gw.url, 'ping', {});
  assert.equal(r.status, 404);
  assert.equal(r.body.error.code, -32601);
  // A name that is not plain ASCII comes in the Base64 sentinel.
  r = await post(gw.url, 'tools/call', { name: 'm__\u00e9cho', arguments: {} });
  assert.equal(r.status, 200);
  assert.equal(r.body.error.code, -32602, 'an unknown tool, once the headers passed');
  // An argument the tool mirrors in Mcp-Param-Region must be mirrored.
  const wh = { name: 'm__with-header', arguments: { region: 'eu-north', query: 'q' } };
  r = await post(gw.url, 'tools/call', wh);
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32020);
  assert.match(r.body.error.message, /Mcp-Param-Region/);
  r = await post(gw.url, 'tools/call', wh, { headers: { 'Mcp-Param-Region': 'eu-south' } });
  assert.equal(r.body.error.code, -32020);
  // With a progress token or a log level the answer could be a stream, but
  // an error alone is still one JSON body at 400.
  for (const meta of [{ progressToken: 'p1' }, { 'io.modelcontextprotocol/logLevel': 'debug' }]) {
    r = await post(gw.url, 'tools/call', wh, { headers: { 'Mcp-Param-Region': 'eu-south' }, meta });
    assert.equal(r.status, 400, JSON.stringify(meta));
    assert.match(r.headers.get('content-type'), /^application\/json/);
    assert.equal(r.body.error.code, -32020);
  }
  r = await post(gw.url, 'tools/call', wh, { headers: { 'mcp-param-region': `=?base64?${Buffer.from('eu-north').toString('base64')}?=` } });
  assert.match(text(r.body.result), /region eu-north/);
  // An empty string is mirrored as an empty header, both ways (libcurl
  // drops a header with an empty value unless it is written "Name;").
  r = await post(gw.url, 'tools/call', { name: 'm__with-header', arguments: { region: '', query: 'q' } },
    { headers: { 'Mcp-Param-Region': '' } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(text(r.body.result), 'region ', JSON.stringify(r.body));
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(gw.url, { method, headers: { 'MCP-Protocol-Version': MODERN, Accept: 'text/event-stream' } });
    assert.equal(res.status, 405);
  }
  assert.match(gw.log(), /2026-07-28 tools\/call refused \(-32020\)/);
});

test('x-mcp-header as a client: any token name is mirrored; a tool whose marks break the rules is left out', async () => {
  const r = await post(gw.url, 'tools/list', {});
  const names = r.body.result.tools.map((t) => t.name);
  assert.ok(names.includes('m__dotted-header'), names.join(' '));
  assert.ok(!names.includes('m__bad-header'), 'an x-mcp-header on a number is refused');
  assert.match(gw.log(), /tool bad-header left out: x-mcp-header Ratio marks a property whose type is not string, integer or boolean/);
  const c = await post(gw.url, 'tools/call', { name: 'm__dotted-header', arguments: { zone: 'z9' } }, { headers: { 'Mcp-Param-X.Zone': 'z9' } });
  assert.match(text(c.body.result), /zone z9/, JSON.stringify(c.body));
  const s = await post(gw.url, 'tools/call', { name: 'm__stats', arguments: {} });
  assert.ok(JSON.parse(text(s.body.result)).headers.includes('z9'), 'the worker sent Mcp-Param-X.Zone upstream');
});

// Tokenless 2026-07-28 clients are one principal that may be many
// clients: with a call parked for input, a second call's upstream request
// (over stdio it names no call) is refused, never given to the first.
test('tokenless clients: a second call that asks while another is parked is refused, not guessed', async () => {
  const ask = (who) => ({ name: 'ask__ask', arguments: { params: { messages: [{ role: 'user', content: { type: 'text', text: `for ${who}` } }], maxTokens: 5 } } });
  const caps = { sampling: {} };
  const c = await post(gw.url, 'tools/call', ask('C'), { caps, id: 'pc' });
  assert.equal(c.body.result.resultType, 'input_required', JSON.stringify(c.body));
  const d = await post(gw.url, 'tools/call', ask('D'), { caps, id: 'pd' });
  assert.equal(d.body.result.isError, true, JSON.stringify(d.body));
  assert.match(d.body.result.content[0].text, /cannot tell which request/);
  const inputResponses = Object.fromEntries(Object.keys(c.body.result.inputRequests).map((k) => [k, { role: 'assistant', content: { type: 'text', text: 'answer C' }, model: 'm' }]));
  const rc = await post(gw.url, 'tools/call', { ...ask('C'), inputResponses, requestState: c.body.result.requestState }, { caps, id: 'pc2' });
  assert.match(rc.body.result.content[0].text, /answer C/);
});

test('server/discover and lists say resultType, ttlMs and cacheScope', async () => {
  let r = await post(gw.url, 'server/discover', {});
  assert.equal(r.body.result.resultType, 'complete');
  assert.ok(r.body.result.supportedVersions.includes(MODERN));
  assert.equal(r.body.result._meta['io.modelcontextprotocol/serverInfo'].name, 'mcp-supervisor');
  assert.equal(r.body.result.ttlMs, 30000);
  assert.equal(r.body.result.cacheScope, 'public');
  r = await post(gw.url, 'tools/list', {});
  assert.equal(r.body.result.resultType, 'complete');
  assert.equal(r.body.result.ttlMs, 30000);
  assert.equal(r.body.result.cacheScope, 'public', 'no ACL and no per-session upstream: the same for everyone');
  assert.ok(r.body.result.tools.some((t) => t.name === 'm__echo'));
  r = await post(gw.url, 'tools/call', { name: 'm__echo', arguments: { text: 'rt' } });
  assert.equal(r.body.result.resultType, 'complete');
});

test('logs only for a request that asks, at its level, on its own stream; progress too', async () => {
  let r = await post(gw.url, 'tools/call', { name: 'm__slow', arguments: { steps: 2, ms: 10 } },
    { meta: { progressToken: 'tok', 'io.modelcontextprotocol/logLevel': 'info' } });
  assert.equal(r.headers.get('content-type'), 'text/event-stream');
  assert.equal(r.events.filter((e) => e.method === 'notifications/progress' && e.params.progressToken === 'tok').length, 2);
  assert.equal(r.events.filter((e) => e.method === 'notifications/message').length, 2);
  r = await post(gw.url, 'tools/call', { name: 'm__slow', arguments: { steps: 2, ms: 10 } },
    { meta: { progressToken: 'tok2', 'io.modelcontextprotocol/logLevel': 'error' } });
  assert.equal(r.events.filter((e) => e.method === 'notifications/message').length, 0, 'below the level asked for');
  r = await post(gw.url, 'tools/call', { name: 'm__slow', arguments: { steps: 2, ms: 10 } });
  assert.equal(r.headers.get('content-type'), 'application/json');
  assert.match(JSON.stringify(r.body.result), /slow done/);
});

test('subscriptions/listen: acknowledged, then list changes and resource updates, tagged', async () => {
  const { client } = await connect();
  const got = { updated: [], changed: 0 };
  client.setNotificationHandler('notifications/resources/updated', (n) => { got.updated.push(n.params.uri); });
  client.setNotificationHandler('notifications/tools/list_changed', () => { got.changed++; });
  const sub = await client.listen({ toolsListChanged: true, resourceSubscriptions: ['res://counter', 'res://nowhere'] });
  assert.deepEqual(sub.honoredFilter.resourceSubscriptions, ['res://counter'], 'a URI no upstream has is not honoured');
  // The gateway's own listen at the upstream follows: bump until it shows.
  for (let i = 0; i < 50 && got.updated.length === 0; i++) {
    await client.callTool({ name: 'm__bump', arguments: {} });
    await sleep(100);
  }
  await client.callTool({ name: 'm__add-tool', arguments: {} });
  for (let i = 0; i < 100 && got.changed === 0; i++) await sleep(50);
  assert.ok(got.updated.length > 0);
  assert.ok(got.updated.every((u) => u === 'res://counter'));
  assert.ok(got.changed >= 1);
  await sub.close();
  // By hand: the acknowledgement comes first, with the request's id.
  const ac = new AbortController();
  const res = await fetch(gw.url, {
    method: 'POST', signal: ac.signal,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'L-1', method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { promptsListChanged: true } } }),
  });
  const reader = res.body.getReader();
  const { value } = await reader.read();
  const first = JSON.parse(new TextDecoder().decode(value).split('\n').find((l) => l.startsWith('data: ')).slice(6));
  assert.equal(first.method, 'notifications/subscriptions/acknowledged');
  assert.equal(first.params._meta['io.modelcontextprotocol/subscriptionId'], 'L-1');
  assert.deepEqual(first.params.notifications, { promptsListChanged: true });
  ac.abort();
  await client.close();
});

test('between modern peers a decline never stands in for an undeclared capability; a tool: link answers', async () => {
  // No elicitation declared: with the default strategies the upstream is
  // not told the gateway offers it (a decline would answer for a client
  // that never declared it), so it refuses -32021, relayed at HTTP 400.
  let r = await post(gw.url, 'tools/call', { name: 'md__ask-name', arguments: {} }, { caps: {} });
  assert.equal(r.body.error?.code, -32021, JSON.stringify(r.body));
  assert.equal(r.status, 400, 'relayed at the status the specification gives it');
  // The same with [ "client" ] alone.
  r = await post(gw.url, 'tools/call', { name: 'm__ask-name', arguments: {} }, { caps: {} });
  assert.equal(r.body.error?.code, -32021, JSON.stringify(r.body));
  assert.equal(r.status, 400);
  // A tool: link can always answer sampling: the upstream is told of it,
  // and in one round the client gets only its own request...
  r = await post(gw.url, 'tools/call', { name: 'mt__ask-both', arguments: {} }, { caps: { elicitation: {} } });
  const ir = r.body.result;
  assert.equal(ir?.resultType, 'input_required', JSON.stringify(r.body));
  assert.deepEqual(Object.keys(ir.inputRequests), ['who']);
  assert.equal(typeof ir.requestState, 'string');
  // ...and its retry carries the gateway's answer to the other.
  r = await post(gw.url, 'tools/call', {
    name: 'mt__ask-both', arguments: {},
    inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } },
    requestState: ir.requestState,
  }, { caps: { elicitation: {} } });
  assert.match(text(r.body.result), /both: local model \(system: -, max 10\) says: both\? \/ accept Ada/, JSON.stringify(r.body));
  // The same when the upstream seals its own requestState (the SDK's
  // codec: longer than an id): the gateway keeps its answer under it.
  r = await post(gw.url, 'tools/call', { name: 'mt__ask-both-state', arguments: {} }, { caps: { elicitation: {} } });
  const irs = r.body.result;
  assert.equal(irs?.resultType, 'input_required', JSON.stringify(r.body));
  assert.deepEqual(Object.keys(irs.inputRequests), ['who']);
  assert.ok(irs.requestState.length >= 64, `a sealed state: ${irs.requestState}`);
  r = await post(gw.url, 'tools/call', {
    name: 'mt__ask-both-state', arguments: {},
    inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } },
    requestState: irs.requestState,
  }, { caps: { elicitation: {} } });
  assert.match(text(r.body.result), /both with state: local model .* says: both\? \/ accept Ada/, JSON.stringify(r.body));
  // Two calls given the same sealed state (the SDK's codec mints the same
  // token for the same round within a second): each retry gets the
  // gateway's answer, neither loses it to the other.
  let pair;
  for (let i = 0; i < 5; i++) {
    pair = await Promise.all(['p1', 'p2'].map((id) => post(gw.url, 'tools/call', { name: 'mt__ask-both-state', arguments: {} }, { caps: { elicitation: {} }, id })));
    if (pair[0].body.result?.requestState === pair[1].body.result?.requestState) break;
  }
  assert.equal(pair[0].body.result.requestState, pair[1].body.result.requestState, 'the same state for both');
  for (const [i, name] of [[0, 'Ada'], [1, 'Lin']]) {
    r = await post(gw.url, 'tools/call', {
      name: 'mt__ask-both-state', arguments: {},
      inputResponses: { who: { action: 'accept', content: { name } } },
      requestState: pair[i].body.result.requestState,
    }, { caps: { elicitation: {} } });
    assert.match(text(r.body.result), new RegExp(`both with state: local model .* says: both\\? / accept ${name}`), JSON.stringify(r.body));
  }
  // With the SDK: a client declaring elicitation only.
  const client = new Client({ name: 'half', version: '1' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } });
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Lin' } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  assert.match(text(await client.callTool({ name: 'mt__ask-both', arguments: {} })), /both: local model .* says: both\? \/ accept Lin/);
  await client.close();
});

test('a 2025 client on the same listener, the same upstream', async () => {
  const client = new LegacyClient({ name: 'old', version: '1' });
  await client.connect(new LegacyTransport(new URL(gw.url)));
  assert.match(text(await client.callTool({ name: 'm__echo', arguments: { text: 'old and new' } })), /old and new/);
  // The worker mirrors an empty argument in an empty Mcp-Param header.
  assert.equal(text(await client.callTool({ name: 'm__with-header', arguments: { region: '' } })), 'region ');
  await client.close();
});
