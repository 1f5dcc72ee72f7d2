// SPDX-License-Identifier: ISC
// A 2026-07-28 client through the gateway to a 2025 upstream: the
// reference server (@modelcontextprotocol/server-everything, SDK v1, stdio)
// asks its client for sampling, elicitation and roots in the middle of a
// call; the client, on SDK v2 pinned to 2026-07-28, cannot be sent those
// requests, so the gateway parks the call and answers input_required, and
// the client's retry resumes it.  Also: its requestState refused when
// tampered, replayed, another request's or another principal's, nothing
// run twice; -32021 for an undeclared capability; strategies answering
// for a client that cannot; TTL expiry and a closed stream cancelling the
// parked call upstream.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startGateway, q, nodeModules, sleep, srcdir } from '../lib/gateway.mjs';
import { post } from '../lib/modern.mjs';

const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const entry = (name, extra = '') =>
  `{ name = ${q(name)}; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(everything)}, "stdio" ]; ${extra} }`;
const TOKEN_A = 'principal-a-token-0123456789';
const TOKEN_B = 'principal-b-token-0123456789';
let gw;

before(async () => {
  // ev is shared, with the default strategies (client, then decline), so
  // it is told the gateway offers sampling and elicitation; evs runs one
  // instance per session (the 2026-07-28 requests of a principal are one
  // session).
  gw = await startGateway({
    globals: `auth_tokens = [ ${q(TOKEN_A)}, ${q(TOKEN_B)} ]; request_state_ttl = 5;`,
    servers: [
      entry('ev'),
      // Sampling by the client alone: what it did not declare is -32021.
      entry('evs', 'isolation = "per-session"; sampling = [ "client" ];'),
      `{ name = "ask"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(path.join(srcdir, 't/fixtures/sampling-server.mjs'))} ]; }`,
    ],
  });
  await gw.waitFor((s) => s.upstreams.find((u) => u.name === 'ev').tools >= 15, 'conditional tools');
});
after(async () => { assert.equal(await gw.stop(), 0); });

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function connect(caps = { sampling: {}, elicitation: { form: {} }, roots: {} }, mode = { pin: '2026-07-28' }) {
  const seen = { sampling: 0, elicitation: 0, roots: 0 };
  const client = new Client({ name: 'modern-test', version: '1' }, { capabilities: caps, versionNegotiation: { mode } });
  client.setRequestHandler('sampling/createMessage', async (req) => {
    seen.sampling++;
    assert.match(JSON.stringify(req.params.messages), /2\+2/);
    return { role: 'assistant', content: { type: 'text', text: 'four, from the modern client' }, model: 'm', stopReason: 'endTurn' };
  });
  client.setRequestHandler('elicitation/create', async () => {
    seen.elicitation++;
    return { action: 'accept', content: { name: 'Ada', check: true, firstLine: 'x', integer: 1, number: 1, enum: 'a' } };
  });
  client.setRequestHandler('roots/list', async () => {
    seen.roots++;
    return { roots: [{ uri: 'file:///srv/modern', name: 'modern' }] };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url),
    { requestInit: { headers: { Authorization: `Bearer ${TOKEN_A}` } } }));
  return { client, seen };
}

test('a pinned 2026-07-28 client completes sampling, elicitation and roots by input_required rounds', async () => {
  const { client, seen } = await connect();
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  const s = await client.callTool({ name: 'ev__trigger-sampling-request', arguments: { prompt: 'What is 2+2?' } });
  assert.match(text(s), /four, from the modern client/);
  assert.equal(seen.sampling, 1);
  const e = await client.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} });
  assert.match(text(e), /Ada/);
  assert.equal(seen.elicitation, 1);
  // Roots belong to one client: a per-session upstream, here the
  // principal's own instance.
  const r = await client.callTool({ name: 'evs__get-roots-list', arguments: {} });
  assert.match(text(r), /file:\/\/\/srv\/modern/);
  assert.equal(seen.roots, 1);
  assert.equal(gw.status().parked, 0, 'nothing left parked');
  await client.close();
});

test('an SDK v2 client in auto negotiation finds the gateway modern', async () => {
  const { client } = await connect(undefined, 'auto');
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  assert.match(text(await client.callTool({ name: 'ev__echo', arguments: { message: 'auto' } })), /auto/);
  await client.close();
});

const caps = { sampling: {}, elicitation: { form: {} }, roots: {} };
const A = { token: TOKEN_A, caps };

test('input_required by hand: the rounds, then requestState refused when tampered, another request\'s, another principal\'s or replayed', async () => {
  const args = { name: 'ev__trigger-sampling-request', arguments: { prompt: 'What is 2+2?' } };
  const first = await post(gw.url, 'tools/call', args, A);
  assert.equal(first.status, 200);
  const ir = first.body.result;
  assert.equal(ir.resultType, 'input_required');
  const [key] = Object.keys(ir.inputRequests);
  assert.equal(ir.inputRequests[key].method, 'sampling/createMessage');
  assert.match(JSON.stringify(ir.inputRequests[key].params), /2\+2/);
  assert.match(ir.requestState, /^mcpsg1\./);
  assert.equal(gw.status().parked, 1);
  const answer = { [key]: { role: 'assistant', content: { type: 'text', text: 'by hand' }, model: 'm' } };

  // Every byte of the payload and MAC is covered: one changed is refused.
  const dot = ir.requestState.lastIndexOf('.');
  const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  for (const i of [10, dot - 3, dot + 5]) {
    const r = await post(gw.url, 'tools/call', { ...args, inputResponses: answer, requestState: flip(ir.requestState, i) }, A);
    assert.equal(r.body.error?.code, -32602, JSON.stringify(r.body));
    assert.match(r.body.error.message, /requestState/);
  }
  // Another request (arguments changed) and another principal.
  let r = await post(gw.url, 'tools/call', { ...args, arguments: { prompt: 'other' }, inputResponses: answer, requestState: ir.requestState }, A);
  assert.match(r.body.error?.message ?? '', /does not belong/);
  r = await post(gw.url, 'tools/call', { ...args, inputResponses: answer, requestState: ir.requestState }, { token: TOKEN_B, caps });
  assert.match(r.body.error?.message ?? '', /does not belong/);
  // Refused retries touched nothing: the call is still parked.
  assert.equal(gw.status().parked, 1);

  // A retry without the answer is asked again, under a new token.
  r = await post(gw.url, 'tools/call', { ...args, requestState: ir.requestState }, A);
  assert.equal(r.body.result.resultType, 'input_required');
  assert.deepEqual(Object.keys(r.body.result.inputRequests), [key]);
  const token2 = r.body.result.requestState;
  assert.notEqual(token2, ir.requestState);
  // The first token is spent.
  r = await post(gw.url, 'tools/call', { ...args, inputResponses: answer, requestState: ir.requestState }, A);
  assert.match(r.body.error?.message ?? '', /already used/);

  // The real retry completes the call, under the retry's id.
  r = await post(gw.url, 'tools/call', { ...args, inputResponses: answer, requestState: token2 }, { ...A, id: 'retry-1' });
  assert.equal(r.body.id, 'retry-1');
  assert.equal(r.body.result.resultType, 'complete');
  assert.match(JSON.stringify(r.body.result), /by hand/);
  assert.equal(gw.status().parked, 0);
  // And replaying it runs nothing again.
  r = await post(gw.url, 'tools/call', { ...args, inputResponses: answer, requestState: token2 }, A);
  assert.equal(r.body.error?.code, -32602);
  assert.match(r.body.error.message, /already used/);
  // A token not the gateway's is refused for a 2025 upstream's tool.
  r = await post(gw.url, 'tools/call', { ...args, inputResponses: answer, requestState: 'eyJzdGF0ZSI6MX0' }, A);
  assert.equal(r.body.error?.code, -32602);
  assert.match(gw.log(), /requestState failed verification|not minted by this gateway/);
});

// The requests of a principal share one internal session, and a stdio
// upstream's request says nothing of the call it is for: with two of the
// principal's calls in flight the gateway cannot tell whose it is, and
// refuses it rather than park the wrong client's call.
test('two calls of one principal in flight: an upstream request with no origin is refused, never parked on the other call', async () => {
  const ask = post(gw.url, 'tools/call', { name: 'ask__ask', arguments: { delayMs: 800, params: {
    messages: [{ role: 'user', content: { type: 'text', text: 'for A' } }], maxTokens: 5 } } }, { ...A, id: 'A' });
  await sleep(200);
  const slow = await post(gw.url, 'tools/call', { name: 'ask__sleep', arguments: { ms: 2500 } }, { ...A, id: 'B' });
  assert.equal(slow.body.result.resultType, 'complete', `B gets its own answer: ${JSON.stringify(slow.body)}`);
  assert.match(slow.body.result.content[0].text, /slept 2500/);
  const a = await ask;
  assert.equal(a.body.result.isError, true, `A's sampling was refused: ${JSON.stringify(a.body)}`);
  assert.match(a.body.result.content[0].text, /cannot tell which request/);
  assert.equal(gw.status().parked, 0);
});

test('a principal with a token: a call parked for input and a second call that asks; each gets its own input_required', async () => {
  const ask = (who) => ({ name: 'ask__ask', arguments: { params: { messages: [{ role: 'user', content: { type: 'text', text: `for ${who}` } }], maxTokens: 5 } } });
  const answer = (ir, text) => Object.fromEntries(Object.keys(ir.inputRequests).map((k) => [k, { role: 'assistant', content: { type: 'text', text }, model: 'm' }]));
  const a = await post(gw.url, 'tools/call', ask('A'), { ...A, id: 'pa' });
  assert.equal(a.body.result.resultType, 'input_required');
  assert.match(JSON.stringify(a.body.result.inputRequests), /for A/);
  // A waits for its answer; B's tool is the one asking now.
  const b = await post(gw.url, 'tools/call', ask('B'), { ...A, id: 'pb' });
  assert.equal(b.body.result.resultType, 'input_required', JSON.stringify(b.body));
  assert.match(JSON.stringify(b.body.result.inputRequests), /for B/);
  const rb = await post(gw.url, 'tools/call', { ...ask('B'), inputResponses: answer(b.body.result, 'answer B'), requestState: b.body.result.requestState }, { ...A, id: 'pb2' });
  assert.match(rb.body.result.content[0].text, /answer B/);
  const ra = await post(gw.url, 'tools/call', { ...ask('A'), inputResponses: answer(a.body.result, 'answer A'), requestState: a.body.result.requestState }, { ...A, id: 'pa2' });
  assert.match(ra.body.result.content[0].text, /answer A/);
  assert.equal(gw.status().parked, 0);
});

test('lists say cacheScope private when a per-session upstream makes them differ by principal', async () => {
  const r = await post(gw.url, 'tools/list', {}, A);
  assert.equal(r.body.result.resultType, 'complete');
  assert.equal(r.body.result.cacheScope, 'private');
  const d = await post(gw.url, 'server/discover', {}, A);
  assert.equal(d.body.result.cacheScope, 'public');
});

test('a resource that does not exist is -32602 for a 2026-07-28 client, never -32002', async () => {
  // Unknown to the gateway's catalog.
  let r = await post(gw.url, 'resources/read', { uri: 'nowhere://at/all' }, A);
  assert.equal(r.body.error.code, -32602, JSON.stringify(r.body));
  assert.match(r.body.error.message, /Resource not found/);
  assert.deepEqual(r.body.error.data, { uri: 'nowhere://at/all' }, 'the URI in data (sep-2164)');
  // And the same when a 2025 upstream says -32002 itself.
  r = await post(gw.url, 'resources/read', { uri: 'ask://missing' }, A);
  assert.equal(r.body.error.code, -32602, JSON.stringify(r.body));
});

test('an undeclared capability is -32021 at HTTP 400, and the call is cancelled upstream', async () => {
  const r = await post(gw.url, 'tools/call', { name: 'evs__trigger-sampling-request', arguments: { prompt: 'x' } }, { token: TOKEN_A, caps: {} });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32021);
  assert.ok(r.body.error.data.requiredCapabilities.sampling, JSON.stringify(r.body.error));
  await gw.waitFor((s) => s.upstreams.every((u) => u.pending === 0) && s.parked === 0, 'nothing pending', 5000);
  // The same with a progress token: nothing came before the error, so it
  // is still one JSON body at 400, not an event stream at 200.
  const p = await post(gw.url, 'tools/call', { name: 'evs__trigger-sampling-request', arguments: { prompt: 'x' } },
    { token: TOKEN_A, caps: {}, meta: { progressToken: 'p-32021' } });
  assert.equal(p.status, 400);
  assert.equal(p.body.error.code, -32021);
  await gw.waitFor((s) => s.upstreams.every((u) => u.pending === 0) && s.parked === 0, 'nothing pending', 5000);
});

test('strategies answer for a client that cannot: decline, instead of -32021', async () => {
  // ev's sampling strategies are the default: client, then decline.  A
  // 2025 upstream cannot say whether it needs a capability or only tries
  // it, so the gateway answers for the client as it does for a 2025 one
  // (with [ "client" ] alone, evs above, the client gets -32021).
  const r = await post(gw.url, 'tools/call', { name: 'ev__trigger-sampling-request', arguments: { prompt: 'x' } }, { token: TOKEN_A, caps: {} });
  assert.equal(r.status, 200);
  assert.notEqual(r.body.result?.resultType, 'input_required');
  assert.match(JSON.stringify(r.body), /rejected|declin/i);
});

test('inputResponses without a requestState are ignored: a new call, asked again', async () => {
  const args = { name: 'ev__trigger-sampling-request', arguments: { prompt: 'unasked' } };
  const r = await post(gw.url, 'tools/call', { ...args, inputResponses: { x: { role: 'assistant', content: { type: 'text', text: 'unasked' }, model: 'm' } } }, A);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.result?.resultType, 'input_required', JSON.stringify(r.body));
  const [key] = Object.keys(r.body.result.inputRequests);
  const done = await post(gw.url, 'tools/call', { ...args, inputResponses: { [key]: { role: 'assistant', content: { type: 'text', text: 'asked' }, model: 'm' } }, requestState: r.body.result.requestState }, A);
  assert.match(JSON.stringify(done.body.result), /asked/);
  await gw.waitFor((s) => s.parked === 0 && s.upstreams.every((u) => u.pending === 0), 'nothing parked', 5000);
  // What is not an object of result objects is refused, state or not.
  for (const inputResponses of [null, 7, { k: 12345 }, { k: [] }]) {
    const bad = await post(gw.url, 'tools/call', { ...args, inputResponses }, A);
    assert.equal(bad.body.error?.code, -32602, JSON.stringify([inputResponses, bad.body]));
  }
});

test('no retry within request_state_ttl: the parked call is cancelled upstream', async () => {
  const args = { name: 'ev__trigger-sampling-request', arguments: { prompt: 'What is 2+2?' } };
  const first = await post(gw.url, 'tools/call', args, A);
  assert.equal(first.body.result.resultType, 'input_required');
  assert.equal(gw.status().parked, 1);
  await gw.waitFor((s) => s.parked === 0 && s.upstreams.every((u) => u.pending === 0), 'the parked call cancelled', 12000);
  const [key] = Object.keys(first.body.result.inputRequests);
  const r = await post(gw.url, 'tools/call', { ...args, inputResponses: { [key]: { role: 'assistant', content: { type: 'text', text: 'late' }, model: 'm' } }, requestState: first.body.result.requestState }, A);
  assert.equal(r.body.error?.code, -32602);
  assert.match(r.body.error.message, /expired|already used/);
  assert.match(gw.log(), /did not supply the input within request_state_ttl/);
});

test('a client that closes its stream mid-call cancels the call upstream', async () => {
  const ac = new AbortController();
  const call = post(gw.url, 'tools/call', { name: 'ev__trigger-long-running-operation', arguments: { duration: 30, steps: 30 } },
    { ...A, signal: ac.signal });
  await gw.waitFor((s) => s.upstreams.find((u) => u.name === 'ev').pending === 1, 'the call in flight', 5000);
  ac.abort();
  await assert.rejects(call);
  await gw.waitFor((s) => s.upstreams.every((u) => u.pending === 0), 'the call cancelled', 5000);
  assert.match(gw.log(), /cancelled: its client closed the stream/);
});

test('progress on the request\'s own stream; no stream without progress or logs', async () => {
  let r = await post(gw.url, 'tools/call', { name: 'ev__trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
    { ...A, meta: { progressToken: 'p-1' } });
  assert.equal(r.headers.get('content-type'), 'text/event-stream');
  const progress = r.events.filter((e) => e.method === 'notifications/progress');
  assert.equal(progress.length, 3);
  assert.ok(progress.every((p) => p.params.progressToken === 'p-1'));
  assert.equal(r.body.result.resultType, 'complete');
  r = await post(gw.url, 'tools/call', { name: 'ev__echo', arguments: { message: 'plain' } }, A);
  assert.equal(r.headers.get('content-type'), 'application/json');
  assert.equal(r.body.result.resultType, 'complete');
});
