// SPDX-License-Identifier: ISC
// Sampling chains: each link that cannot serve passes to the next, and the
// reason is in the audit line.  A provider's 400, 429 and 500, its timeout,
// garbage, a stream that breaks, an error event mid-stream, a wrong key
// (401), a spent budget (the provider's and the upstream's), a worker that
// dies (and is restarted), a client without the capability, a client that
// fails (the next link) or refuses (no next link), a tool: link to a local
// model wrapped as an MCP server, and decline at the end.  A reload adds a
// provider.  No key in any log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, startNodeServer, q, srcdir, sleep } from '../lib/gateway.mjs';

const KEY = 'sk-chain-test-a61f0c2e9d7b';
const WRONG = 'sk-chain-wrong-3e8d5a';
const samplingServer = path.join(srcdir, 't/fixtures/sampling-server.mjs');
const fixture = (name) => path.join(srcdir, 't/fixtures', name);
const up = (name, sampling, extra = '') =>
  `{ name = ${q(name)}; command = [ ${q(process.execPath)}, ${q(samplingServer)} ]; sampling = ${sampling}; ${extra} }`;

let gw, flaky, steady;

before(async () => {
  process.env.MCPS_TEST_CHAIN_KEY = KEY;
  process.env.MCPS_TEST_CHAIN_WRONG = WRONG;
  [flaky, steady] = await Promise.all([
    startNodeServer([fixture('llm-openai.mjs')], { env: { STANDIN_KEY: KEY } }),
    startNodeServer([fixture('llm-openai.mjs')], { env: { STANDIN_KEY: KEY, STANDIN_DIRECTIVES: 'off' } }),
  ]);
  const provider = (name, srv, extra = '') => `{ name = ${q(name)}; provider = "openai"; url = "http://127.0.0.1:${srv.port}/v1";
      api_key = "\${env:MCPS_TEST_CHAIN_KEY}"; model = "gpt-4.1-mini"; ${extra} }`;
  const globals = `llm = (
    ${provider('flaky', flaky, 'timeout = 2;')},
    ${provider('steady', steady)},
    { name = "wrongkey"; provider = "openai"; url = "http://127.0.0.1:${steady.port}/v1";
      api_key = "\${env:MCPS_TEST_CHAIN_WRONG}"; model = "gpt-4.1-mini"; },
    ${provider('budget1', steady, 'budget = { requests_per_minute = 1; };')}
  );`;
  gw = await startGateway({
    globals,
    servers: [
      up('fallthrough', '[ "llm:flaky", "llm:steady" ]'),
      up('badkey', '[ "llm:wrongkey", "llm:steady" ]'),
      up('budget', '[ "llm:budget1", "llm:steady" ]'),
      up('upbudget', '[ "llm:steady", "decline" ]', 'budget = { requests_per_minute = 1; };'),
      up('clientfirst', '[ "client", "llm:steady" ]'),
      up('local', '[ "decline" ]'),
      up('viatool', '[ "tool:local/complete", "decline" ]'),
      up('local2', '[ "client", "decline" ]'),
      up('viatool2', '[ "tool:local2/complete", "decline" ]'),
      up('local3', '[ "decline" ]', 'isolation = "per-session";'),
      up('viatool3', '[ "tool:local3/complete", "decline" ]'),
      up('declines', '[ "llm:flaky", "decline" ]'),
      up('onlyflaky', '[ "llm:flaky" ]'),
    ],
  });
  await gw.waitFor((s) => s.llm.every((p) => p.state === 'ready'), 'providers ready');
});

after(async () => {
  const log = gw.log();
  assert.equal(await gw.stop(), 0);
  for (const key of [KEY, WRONG]) {
    assert.ok(!log.includes(key), 'a key is in the gateway\'s log');
    assert.ok(!flaky.log().includes(key) && !steady.log().includes(key), 'a key is in a stand-in\'s log');
  }
  await Promise.all([flaky.stop(), steady.stop()]);
});

async function connect(capabilities = {}, onSample) {
  const client = new Client({ name: 'sampling-chain-test', version: '1' }, { capabilities });
  if (onSample) client.setRequestHandler(CreateMessageRequestSchema, onSample);
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return client;
}
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const count = async (srv) => (await (await fetch(`http://127.0.0.1:${srv.port}/__requests`)).json()).length;
const user = (t) => ({ messages: [{ role: 'user', content: { type: 'text', text: t } }], maxTokens: 50 });

async function askVia(client, upstream, params) {
  const r = await client.callTool({ name: `${upstream}__ask`, arguments: { params } });
  return JSON.parse(text(r));
}

// The last audit line of an upstream.
function audit(upstream) {
  const lines = gw.log().split('\n').filter((l) => l.includes(`audit: sampling upstream=${upstream} `));
  return lines.at(-1) ?? '';
}

test('a provider\'s errors, timeout and garbage fall through to the next link', async () => {
  const client = await connect();
  const cases = [
    ['[error:400]', /HTTP 400 invalid_request_error: Invalid 'messages\[0\]\.content'.*\(http-error\)/],
    ['[error:429]', /HTTP 429 requests: Rate limit reached .*\(rate-limited\)/],
    ['[error:500]', /HTTP 500 server_error: The server had an error.*\(http-error\)/],
    ['[slow:4000]', /no answer within 2 s \(timeout\)/],
    ['[garbage]', /a stream chunk is not a JSON object \(bad-answer\)/],
    ['[cut]', /the stream ended before the end of the answer \(bad-answer\)/],
    ['[midstream]', /the provider reported an error: The server had an error.*\(bad-answer\)/],
  ];
  for (const [directive, why] of cases) {
    const a = await askVia(client, 'fallthrough', user(`tell me ${directive}`));
    assert.ok(a.result, `${directive}: ${JSON.stringify(a)}`);
    assert.match(a.result.content.text, /answers: tell me/, directive);
    const line = audit('fallthrough');
    assert.match(line, /link=llm:steady provider=openai .* outcome=ok/, directive);
    assert.match(line, new RegExp(`tried="llm:flaky: ${why.source}`), directive);
  }
  const st = gw.status().llm.find((p) => p.name === 'flaky');
  assert.equal(st.errors, cases.length);
  assert.equal(st.rate_limited, 1);
  assert.equal(st.timeouts, 1);
  assert.equal(st.in_flight, 0);
  await client.close();
});

test('a wrong key (401) falls through, and the provider\'s message is not repeated', async () => {
  const client = await connect();
  const a = await askVia(client, 'badkey', user('who am I?'));
  assert.ok(a.result, JSON.stringify(a));
  assert.match(audit('badkey'), /tried="llm:wrongkey: HTTP 401: the provider refused the API key \(auth-error\)"/);
  assert.ok(!gw.log().includes('Incorrect API key provided'));
  await client.close();
});

test('a spent budget falls through: the provider\'s, then the upstream\'s', async () => {
  const client = await connect();
  let a = await askVia(client, 'budget', user('first'));
  assert.match(audit('budget'), /link=llm:budget1 .*outcome=ok/);
  a = await askVia(client, 'budget', user('second'));
  assert.ok(a.result);
  assert.match(audit('budget'), /link=llm:steady .*outcome=ok tried="llm:budget1: the budget of llm budget1 is spent \(1 requests per minute\)"/);
  assert.equal(gw.status().llm.find((p) => p.name === 'budget1').refused, 1);
  a = await askVia(client, 'upbudget', user('first'));
  assert.ok(a.result);
  a = await askVia(client, 'upbudget', user('second'));
  assert.equal(a.error?.code, -1, JSON.stringify(a));
  assert.match(a.error.message, /User rejected sampling request/);
  assert.match(JSON.stringify(a.error.data), /llm:steady: the sampling budget of upstream upbudget is spent \(1 requests per minute\)/);
  assert.match(audit('upbudget'), /link=decline .*outcome=declined/);
  await client.close();
});

test('client first: the client answers; without the capability, or failing, the next link does', async () => {
  const before = await count(steady);
  let mode = 'answer';
  const sampler = await connect({ sampling: {} }, async () => {
    if (mode === 'fail') throw new McpError(-32603, 'the client\'s model is down');
    if (mode === 'refuse') throw new McpError(-1, 'User rejected sampling request');
    return { role: 'assistant', content: { type: 'text', text: 'from the human' }, model: 'human' };
  });
  let a = await askVia(sampler, 'clientfirst', user('hello'));
  assert.equal(a.result.content.text, 'from the human');
  assert.equal(await count(steady), before);
  mode = 'fail';
  a = await askVia(sampler, 'clientfirst', user('hello again'));
  assert.match(a.result.content.text, /openai stand-in .* answers: hello again/);
  assert.match(audit('clientfirst'), /link=llm:steady .*tried="client: the client refused it"/);
  mode = 'refuse';
  a = await askVia(sampler, 'clientfirst', user('no'));
  assert.equal(a.error?.code, -1, 'a user\'s refusal is an answer');
  assert.match(audit('clientfirst'), /link=client .*outcome=rejected/);
  await sampler.close();
  const plain = await connect();
  a = await askVia(plain, 'clientfirst', user('no capability'));
  assert.match(a.result.content.text, /answers: no capability/);
  assert.match(audit('clientfirst'), /tried="client: the client does not support sampling"/);
  await plain.close();
});

test('a tool: link asks another upstream\'s tool; its error falls through', async () => {
  const client = await connect();
  let a = await askVia(client, 'viatool', { ...user('summarise this'), systemPrompt: 'Be terse.' });
  assert.equal(a.result.content.text, 'local model (system: Be terse., max 50) says: summarise this');
  assert.equal(a.result.model, 'local-7b');
  assert.equal(a.result.stopReason, 'endTurn');
  assert.match(audit('viatool'), /link=tool:local\/complete provider=- model="local-7b" .*outcome=ok/);
  a = await askVia(client, 'viatool', user('now fail [tool-error]'));
  assert.equal(a.error?.code, -1);
  assert.match(JSON.stringify(a.error.data), /tool:local\/complete: the local model is out of memory/);
  a = await askVia(client, 'viatool', { ...user('with tools'), tools: [{ name: 'f', inputSchema: { type: 'object' } }] });
  assert.match(JSON.stringify(a.error?.data), /a tool: link does not take tools/);
  await client.close();
});

test('while the gateway\'s own tool: call is in flight at an upstream, a request it sends has no origin', async () => {
  // The gateway's call to local2/complete (for viatool2's sampling) and a
  // client's call of local2__ask are in flight at once: local2's
  // sampling/createMessage (stdio: no related id) may be for either, so
  // the gateway never guesses: the client is not asked, it is declined.
  let asked = 0;
  const sampler = await connect({ sampling: {} }, async () => {
    asked++;
    return { role: 'assistant', content: { type: 'text', text: 'guessed' }, model: 'm' };
  });
  const other = await connect();
  // The client's own calls on either side of the gateway's (ids in
  // flight: the client's, the gateway's, the client's).
  const nap = sampler.callTool({ name: 'local2__sleep', arguments: { ms: 2000 } });
  await sleep(200);
  const slow = askVia(other, 'viatool2', user('hold on [wait:1500]'));
  await sleep(400);
  const a = await askVia(sampler, 'local2', user('whose is this?'));
  assert.equal(asked, 0, 'the client was asked for a request that may not be its own');
  assert.equal(a.error?.code, -1, JSON.stringify(a));
  assert.match(gw.log(), /sampling\/createMessage has no origin: calls of more than one client session, or of the gateway's own/);
  assert.match((await slow).result.content.text, /says: hold on/);
  assert.equal(text(await nap), 'slept 2000');
  // With the gateway's call over, the client's own is unambiguous again.
  const b = await askVia(sampler, 'local2', user('mine now'));
  assert.equal(b.result?.content.text, 'guessed', JSON.stringify(b));
  assert.equal(asked, 1);
  await Promise.all([sampler.close(), other.close()]);
});

test('decline at the end of the chain, and an error when nothing is left', async () => {
  const client = await connect();
  let a = await askVia(client, 'declines', user('fail [error:500]'));
  assert.equal(a.error?.code, -1);
  assert.match(a.error.message, /User rejected sampling request/);
  assert.match(JSON.stringify(a.error.data), /llm:flaky: HTTP 500 server_error/);
  a = await askVia(client, 'onlyflaky', user('fail [error:429]'));
  assert.equal(a.error?.code, -32603, JSON.stringify(a));
  assert.match(a.error.message, /llm:flaky: HTTP 429 requests: Rate limit reached/);
  assert.match(audit('onlyflaky'), /link=- provider=- .*outcome=error reason="llm:flaky: HTTP 429/);
  await client.close();
});

test('an upstream that cancels its request stops the provider\'s call, and no other link is tried', async () => {
  const client = await connect();
  const before = await count(steady);
  const r = await client.callTool({ name: 'fallthrough__ask', arguments: { params: user('never mind [slow:3000]'), cancelAfterMs: 300 } });
  assert.match(text(r), /the server gave up/);
  await gw.waitFor((s) => s.llm.find((p) => p.name === 'flaky').in_flight === 0, 'the call cancelled', 2000);
  await gw.waitFor(() => /audit: sampling upstream=fallthrough .*outcome=cancelled reason="cancelled by the upstream"/.test(gw.log()), 'the audit line', 2000);
  await sleep(3500);
  assert.equal(await count(steady), before, 'the chain went no further');
  await client.close();
});

test('an upstream that cancels its request cancels a tool: link\'s call, at a per-session upstream too', async () => {
  const client = await connect();
  for (const name of ['viatool', 'viatool3']) {
    const target = name === 'viatool' ? 'local' : 'local3';
    const r = await client.callTool({ name: `${name}__ask`, arguments: { params: user('never mind [wait:5000]'), cancelAfterMs: 300 } });
    assert.match(text(r), /the server gave up/);
    await gw.waitFor(() => new RegExp(`mcp-worker ${target} info: stderr: complete: cancelled`).test(gw.log()),
      `${target} told of the cancel`, 3000);
  }
  await client.close();
});

test('a provider\'s worker that dies costs its requests a link, and is restarted', async () => {
  const client = await connect();
  const pid = gw.status().llm.find((p) => p.name === 'flaky').pid;
  const call = askVia(client, 'fallthrough', user('slowly [slow:3000]'));
  await gw.waitFor((s) => s.llm.find((p) => p.name === 'flaky').in_flight === 1, 'the request in flight');
  process.kill(pid, 'SIGKILL');
  const a = await call;
  assert.ok(a.result, JSON.stringify(a));
  assert.match(audit('fallthrough'), /link=llm:steady .*tried="llm:flaky: the worker of llm flaky exited"/);
  const st = await gw.waitFor((s) => {
    const p = s.llm.find((x) => x.name === 'flaky');
    return p.state === 'ready' && p.pid !== pid;
  }, 'flaky restarted');
  assert.equal(st.llm.find((p) => p.name === 'flaky').restarts, 1);
  assert.match(gw.log(), /llm flaky: worker killed by signal 9; restarting in 1 s/);
  const b = await askVia(client, 'onlyflaky', user('after the restart'));
  assert.match(b.result.content.text, /answers: after the restart/);
  await client.close();
});

test('a reload adds a provider and changes a chain', async () => {
  const file = path.join(gw.dir, 'mcp-supervisord.conf');
  const conf = readFileSync(file, 'utf8')
    .replace('llm = (', `llm = ( { name = "late"; provider = "openai"; url = "http://127.0.0.1:${steady.port}/v1";
      api_key = "\${env:MCPS_TEST_CHAIN_KEY}"; model = "gpt-4.1"; },`)
    .replace('sampling = [ "llm:flaky" ];', 'sampling = [ "llm:late" ];');
  writeFileSync(file, conf);
  const out = gw.mcpctl('reload');
  assert.match(out, /added llm late/);
  assert.match(out, /changed onlyflaky/);
  await gw.waitFor((s) => s.llm.find((p) => p.name === 'late')?.state === 'ready'
    && s.upstreams.find((u) => u.name === 'onlyflaky').state === 'ready', 'late ready');
  await sleep(200);
  const client = await connect();
  const a = await askVia(client, 'onlyflaky', user('reloaded'));
  assert.equal(a.result.model, 'gpt-4.1-2025-04-14');
  assert.match(audit('onlyflaky'), /link=llm:late provider=openai/);
  await client.close();
});
