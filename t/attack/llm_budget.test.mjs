// SPDX-License-Identifier: ISC
// An upstream that cancels its sampling requests gets no more provider
// work than the budget allows.  A request reserves its maxTokens and an
// estimate of its prompt when it is sent, and a cancelled one keeps its
// reservation charged: eight requests of maxTokens 1000, each cancelled
// 300 ms after it was sent, under a budget of 2500 tokens a day (the
// provider's, then the upstream's), reach the provider twice, not eight
// times.  Eight at once, never cancelled, are admitted two by two.  A
// request that completes is charged what the provider reported, one the
// provider refuses with an error status nothing, and one whose maxTokens
// is over the budget is never sent.  Params the provider's worker cannot
// read as the gateway did (a duplicate key, a number past any range, a
// maxTokens twice or out of range) are refused, and the worker lives on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, startNodeServer, q, srcdir } from '../lib/gateway.mjs';

const KEY = 'sk-budget-test-7d1e5b2a90c4';
const samplingServer = path.join(srcdir, 't/fixtures/sampling-server.mjs');
const rawUpstream = path.join(srcdir, 't/attack/upstream.py');
const up = (name, sampling, extra = '') =>
  `{ name = ${q(name)}; command = [ ${q(process.execPath)}, ${q(samplingServer)} ]; sampling = ${sampling}; ${extra} }`;

let gw, llm, client;

before(async () => {
  process.env.MCPS_TEST_BUDGET_KEY = KEY;
  llm = await startNodeServer([path.join(srcdir, 't/fixtures/llm-openai.mjs')], { env: { STANDIN_KEY: KEY } });
  const provider = (name, extra = '') => `{ name = ${q(name)}; provider = "openai"; url = "http://127.0.0.1:${llm.port}/v1";
      api_key = "\${env:MCPS_TEST_BUDGET_KEY}"; model = "gpt-4.1-mini"; ${extra} }`;
  gw = await startGateway({
    globals: `llm = (
      ${provider('metered', 'budget = { tokens_per_day = 2500; };')},
      ${provider('burst', 'budget = { tokens_per_day = 2500; };')},
      ${provider('settle', 'budget = { tokens_per_day = 2500; };')},
      ${provider('open')}
    );`,
    servers: [
      up('greedy', '[ "llm:metered" ]'),
      up('greedyup', '[ "llm:open" ]', 'budget = { tokens_per_day = 2500; };'),
      up('burst', '[ "llm:burst" ]'),
      up('settle', '[ "llm:settle" ]'),
      `{ name = "raw"; command = [ "python3", ${q(rawUpstream)}, "sampler" ]; sampling = [ "llm:open" ]; }`,
    ],
  });
  await gw.waitFor((s) => s.llm.every((p) => p.state === 'ready'), 'providers ready');
  client = new Client({ name: 'llm-budget-attack', version: '1' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
});

after(async () => {
  await client?.close();
  assert.equal(await gw.stop(), 0);
  await llm.stop();
});

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const sent = async () => (await (await fetch(`http://127.0.0.1:${llm.port}/__requests`)).json()).length;
const provider = (name) => gw.status().llm.find((p) => p.name === name);
const params = (t, maxTokens = 1000) => ({ messages: [{ role: 'user', content: { type: 'text', text: t } }], maxTokens });

async function ask(upstream, p, extra = {}) {
  const r = await client.callTool({ name: `${upstream}__ask`, arguments: { params: p, ...extra } });
  return JSON.parse(text(r));
}

// Eight requests, each cancelled by the upstream once the provider has it.
async function cancelEight(upstream) {
  const before = await sent();
  const answers = [];
  for (let i = 0; i < 8; i++) {
    answers.push(await ask(upstream, params(`[slow:5000] cancel me ${i}`), { cancelAfterMs: 300 }));
  }
  return { reached: (await sent()) - before, answers };
}

test('cancelled requests keep their reservation: the provider\'s budget', async () => {
  const { reached, answers } = await cancelEight('greedy');
  assert.equal(reached, 2, `${reached} of 8 requests of maxTokens 1000 reached the provider under 2500 tokens a day`);
  const refused = answers.filter((a) => a.error?.code === -32003);
  assert.equal(refused.length, 6, JSON.stringify(answers));
  assert.match(refused[0].error.message, /llm:metered: the budget of llm metered is spent \(2500 tokens per day: \d+ used or reserved, this request reserves \d+\)/);
  await gw.waitFor((s) => s.llm.find((p) => p.name === 'metered').in_flight === 0, 'nothing in flight');
  const st = provider('metered');
  assert.ok(st.budget.tokens_used >= 2000 && st.budget.tokens_used <= 2500, JSON.stringify(st));
  assert.equal(st.budget.tokens_reserved, 0);
  assert.equal(st.tokens_in + st.tokens_out, 0, 'the provider reported nothing');
});

test('cancelled requests keep their reservation: the upstream\'s budget', async () => {
  const { reached, answers } = await cancelEight('greedyup');
  assert.equal(reached, 2, `${reached} of 8 requests of maxTokens 1000 reached the provider under 2500 tokens a day`);
  const refused = answers.filter((a) => a.error?.code === -32003);
  assert.equal(refused.length, 6, JSON.stringify(answers));
  assert.match(refused[0].error.message, /llm:open: the sampling budget of upstream greedyup is spent \(2500 tokens per day: /);
});

test('requests in flight hold their reservation: eight at once, two admitted', async () => {
  const before = await sent();
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ask('burst', params(`[slow:1500] burst ${i}`))));
  const ok = answers.filter((a) => a.result);
  assert.equal(ok.length, 2, JSON.stringify(answers));
  assert.equal((await sent()) - before, 2);
  assert.equal(answers.filter((a) => a.error?.code === -32003).length, 6);
  // Settled to what the provider reported: the next ones fit again.
  const st = provider('burst');
  assert.equal(st.budget.tokens_reserved, 0);
  assert.equal(st.budget.tokens_used, st.tokens_in + st.tokens_out);
  assert.ok(st.budget.tokens_used < 200, JSON.stringify(st));
  assert.ok((await ask('burst', params('after the burst'))).result);
});

test('completed requests are charged what the provider said, refused ones nothing', async () => {
  for (let i = 0; i < 5; i++) {
    const a = await ask('settle', params(`fine ${i}`));
    assert.ok(a.result, JSON.stringify(a));
  }
  for (let i = 0; i < 5; i++) {
    const a = await ask('settle', params(`refuse me [error:400] ${i}`));
    assert.match(a.error?.message ?? '', /HTTP 400/, JSON.stringify(a));
  }
  let st = provider('settle');
  assert.equal(st.budget.tokens_used, st.tokens_in + st.tokens_out);
  assert.equal(st.budget.tokens_reserved, 0);
  // Over the whole budget: never sent.
  const before = await sent();
  const a = await ask('settle', params('too much', 3000));
  assert.equal(a.error?.code, -32003, JSON.stringify(a));
  assert.match(a.error.message, /this request reserves 30\d\d\)/);
  assert.equal(await sent(), before);
  st = provider('settle');
  assert.equal(st.budget.tokens_used, st.tokens_in + st.tokens_out);
});

test('params the worker would read otherwise are refused, and the worker lives', async () => {
  const pid = provider('open').pid;
  const msg = '"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]';
  const cases = [
    [`{${msg},"maxTokens":10,"metadata":{"a":1,"a":2}}`, /duplicate object key/],
    [`{${msg},"maxTokens":10,"temperature":1e400}`, /real number overflow/],
    [`{${msg},"maxTokens":10,"metadata":{"n":123456789012345678901234567890}}`, /too big integer/],
    [`{${msg},"maxTokens":10,"maxTokens":100000}`, /maxTokens is given more than once/],
    [`{${msg},"maxTokens":123456789012345678901234567890}`, /maxTokens must be a positive integer/],
    [`{${msg},"maxTokens":0}`, /maxTokens must be a positive integer/],
  ];
  for (const [params, why] of cases) {
    const r = await client.callTool({ name: 'raw__sample', arguments: { params } });
    const a = JSON.parse(text(r));
    assert.ok(a.error, `${params}: ${JSON.stringify(a)}`);
    assert.match(a.error.message, why, params);
  }
  const st = provider('open');
  assert.equal(st.pid, pid, 'the provider\'s worker was restarted');
  assert.equal(st.restarts, 0);
  assert.equal(st.state, 'ready');
  const r = await client.callTool({ name: 'raw__sample', arguments: { params: `{${msg},"maxTokens":10}` } });
  assert.match(JSON.parse(text(r)).result?.content?.text ?? '', /openai stand-in .* answers: hi/, text(r));
});
