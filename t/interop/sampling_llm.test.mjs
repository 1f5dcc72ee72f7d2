// SPDX-License-Identifier: ISC
// The gateway answers sampling itself, through each provider: an official
// SDK client that declares no sampling calls server-everything's
// trigger-sampling-request through the gateway, and the stand-ins for
// OpenAI, Anthropic and Ollama (t/fixtures/llm-*.mjs, themselves checked
// with the vendors' clients in llm_standins.test.mjs) answer it.  Then
// the exact requests each vendor got, sampling with tools both ways,
// progress while a provider streams, model preferences, a provider that
// does not stream, content a provider cannot take, the audit lines,
// mcpctl's counters, and no key anywhere in the logs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { startGateway, startNodeServer, q, nodeModules, srcdir, bin } from '../lib/gateway.mjs';

const OPENAI_KEY = 'sk-proj-test-5f2c91d0e7a84b36';
const ANTHROPIC_KEY = 'sk-ant-test-0b7e44a1c9d26f58';
const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const samplingServer = path.join(srcdir, 't/fixtures/sampling-server.mjs');
const fixture = (name) => path.join(srcdir, 't/fixtures', name);
const ev = (name, sampling) =>
  `{ name = ${q(name)}; command = [ ${q(process.execPath)}, ${q(everything)}, "stdio" ]; sampling = ${sampling}; }`;
const ask = (name, sampling, extra = '') =>
  `{ name = ${q(name)}; command = [ ${q(process.execPath)}, ${q(samplingServer)} ]; sampling = ${sampling}; ${extra} }`;
const weather = {
  name: 'get_weather', description: 'Weather in a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

let gw, keydir, openai, anthropic, ollama;

before(async () => {
  keydir = mkdtempSync(path.join(tmpdir(), 'mcps-keys-'));
  writeFileSync(path.join(keydir, 'anthropic.key'), `${ANTHROPIC_KEY}\n`, { mode: 0o600 });
  process.env.MCPS_TEST_OPENAI_KEY = OPENAI_KEY;
  [openai, anthropic, ollama] = await Promise.all([
    startNodeServer([fixture('llm-openai.mjs')], { env: { STANDIN_KEY: OPENAI_KEY } }),
    startNodeServer([fixture('llm-anthropic.mjs')], { env: { STANDIN_KEY: ANTHROPIC_KEY } }),
    startNodeServer([fixture('llm-ollama.mjs')], { env: { STANDIN_KEY: '' } }),
  ]);
  const globals = `llm = (
    { name = "gpt"; provider = "openai"; url = "http://127.0.0.1:${openai.port}/v1";
      api_key = "\${env:MCPS_TEST_OPENAI_KEY}"; model = "gpt-4.1-mini"; models = [ "gpt-4.1", "gpt-4.1-mini" ];
      scores = ( { model = "gpt-4.1"; cost = 0.9; speed = 0.3; intelligence = 0.9; },
                 { model = "gpt-4.1-mini"; cost = 0.2; speed = 0.8; intelligence = 0.6; } ); },
    { name = "claude"; provider = "anthropic"; url = "http://127.0.0.1:${anthropic.port}";
      api_key = "\${file:${path.join(keydir, 'anthropic.key')}}"; model = "claude-sonnet-4-5"; },
    { name = "local"; provider = "ollama"; url = "http://127.0.0.1:${ollama.port}"; model = "llama3.2"; },
    { name = "gpt-json"; provider = "openai"; url = "http://127.0.0.1:${openai.port}/v1";
      api_key = "\${env:MCPS_TEST_OPENAI_KEY}"; model = "gpt-5"; max_tokens_field = "max_completion_tokens";
      stream = false; }
  );`;
  gw = await startGateway({
    globals,
    servers: [
      ev('evgpt', '[ "client", "llm:gpt" ]'),
      ev('evclaude', '[ "client", "llm:claude" ]'),
      ev('evlocal', '[ "llm:local" ]'),
      ask('askgpt', '[ "llm:gpt" ]', 'log_prompts = true;'),
      ask('askclaude', '[ "llm:claude" ]'),
      ask('asklocal', '[ "llm:local" ]'),
      ask('askjson', '[ "llm:gpt-json" ]'),
    ],
  });
  await gw.waitFor((s) => s.llm.every((p) => p.state === 'ready'), 'providers ready');
  // server-everything adds its sampling tool once it knows the capability.
  await gw.waitFor((s) => ['evgpt', 'evclaude', 'evlocal'].every((n) => s.upstreams.find((u) => u.name === n).tools >= 14),
    'sampling tools listed');
});

after(async () => {
  const log = gw.log();
  assert.equal(await gw.stop(), 0);
  for (const key of [OPENAI_KEY, ANTHROPIC_KEY]) {
    assert.ok(!log.includes(key), 'a key is in the gateway\'s log');
    for (const s of [openai, anthropic, ollama]) assert.ok(!s.log().includes(key), 'a key is in a stand-in\'s log');
  }
  await Promise.all([openai.stop(), anthropic.stop(), ollama.stop()]);
  rmSync(keydir, { recursive: true, force: true });
});

async function connect(capabilities = {}, onSample) {
  const client = new Client({ name: 'sampling-llm-test', version: '1' }, { capabilities });
  if (onSample) client.setRequestHandler(CreateMessageRequestSchema, onSample);
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return client;
}
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const requests = async (srv) => (await fetch(`http://127.0.0.1:${srv.port}/__requests`)).json();
const lastRequest = async (srv) => (await requests(srv)).at(-1);

// Call ask on an upstream; the parsed {result, progress} or {error}.
async function askVia(client, upstream, params, progress = false) {
  const r = await client.callTool({ name: `${upstream}__ask`, arguments: { params, progress } });
  return JSON.parse(text(r));
}

test('a client without sampling is served by each provider', async () => {
  const client = await connect();
  const { tools } = await client.listTools();
  for (const n of ['evgpt', 'evclaude', 'evlocal']) {
    assert.ok(tools.some((t) => t.name === `${n}__trigger-sampling-request`), `${n} lists its sampling tool`);
  }
  let r = await client.callTool({ name: 'evgpt__trigger-sampling-request', arguments: { prompt: 'What is 2+2?' } });
  assert.match(text(r), /openai stand-in \(gpt-4\.1-mini\) answers: Resource trigger-sampling-request context: What is 2\+2\?/);
  assert.match(text(r), /"model": "gpt-4\.1-mini-2025-04-14"/, 'the model that really answered');
  assert.match(text(r), /"stopReason": "endTurn"/);
  let req = await lastRequest(openai);
  assert.equal(req.path, '/v1/chat/completions');
  assert.equal(req.headers.authorization, '<the key>');
  assert.deepEqual(req.body.messages[0], { role: 'system', content: 'You are a helpful test server.' });
  assert.equal(req.body.max_tokens, 100, 'a compatible server gets max_tokens');
  assert.equal(req.body.temperature, 0.7);
  assert.equal(req.body.stream, true);

  r = await client.callTool({ name: 'evclaude__trigger-sampling-request', arguments: { prompt: 'Name a colour.' } });
  assert.match(text(r), /anthropic stand-in \(claude-sonnet-4-5\) answers: .*Name a colour\./);
  assert.match(text(r), /"model": "claude-sonnet-4-5-20250929"/);
  req = await lastRequest(anthropic);
  assert.equal(req.path, '/v1/messages');
  assert.equal(req.headers['x-api-key'], '<the key>');
  assert.equal(req.headers['anthropic-version'], '2023-06-01');
  assert.equal(req.body.system, 'You are a helpful test server.');
  assert.ok(req.body.messages.every((m) => m.role !== 'system'));
  assert.equal(req.body.max_tokens, 100);

  r = await client.callTool({ name: 'evlocal__trigger-sampling-request', arguments: { prompt: 'Say hi.' } });
  assert.match(text(r), /ollama stand-in \(llama3\.2\) answers: .*Say hi\./);
  req = await lastRequest(ollama);
  assert.equal(req.path, '/api/chat');
  assert.deepEqual(req.body.options, { num_predict: 100, temperature: 0.7 });
  assert.equal(req.body.messages[0].role, 'system');
  assert.equal(req.body.stream, true);
  await client.close();
  assert.match(gw.log(), /audit: sampling upstream=evgpt session=\w{8} link=llm:gpt provider=openai model="gpt-4\.1-mini-2025-04-14" tokens_in=\d+ tokens_out=\d+ latency_ms=\d+ outcome=ok tried="client: the client does not support sampling"/);
});

test('client first: a client that samples answers, and no provider is asked', async () => {
  const before = (await requests(openai)).length;
  let asked = 0;
  const client = await connect({ sampling: {} }, async () => {
    asked++;
    return { role: 'assistant', content: { type: 'text', text: 'the human said four' }, model: 'human-1' };
  });
  const r = await client.callTool({ name: 'evgpt__trigger-sampling-request', arguments: { prompt: 'client first' } });
  assert.equal(asked, 1);
  assert.match(text(r), /the human said four/);
  assert.equal((await requests(openai)).length, before);
  assert.match(gw.log(), /audit: sampling upstream=evgpt session=\w{8} link=client provider=- model="-" tokens_in=0 tokens_out=0 latency_ms=\d+ outcome=ok/);
  await client.close();
});

// A 2026-07-28 client (SDK v2, pinned): the chain's client link asks it by
// input_required when it declares sampling on its request, and falls
// through to the provider when it does not.
test('2026-07-28 clients: the client link by input_required, else the provider', async () => {
  const modern = async (caps, handler) => {
    const client = new ModernClient({ name: 'modern-llm', version: '1' },
      { capabilities: caps, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    if (handler) client.setRequestHandler('sampling/createMessage', handler);
    await client.connect(new ModernTransport(new URL(gw.url)));
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    return client;
  };
  const before = (await requests(openai)).length;
  let asked = 0;
  let client = await modern({ sampling: {} }, async () => {
    asked++;
    return { role: 'assistant', content: { type: 'text', text: 'the modern human said four' }, model: 'human-2' };
  });
  let r = await client.callTool({ name: 'evgpt__trigger-sampling-request', arguments: { prompt: 'modern first' } });
  assert.equal(asked, 1);
  assert.match(text(r), /the modern human said four/);
  assert.equal((await requests(openai)).length, before, 'no provider was asked');
  assert.equal(gw.status().parked, 0);
  await client.close();
  client = await modern({});
  r = await client.callTool({ name: 'evgpt__trigger-sampling-request', arguments: { prompt: 'modern without sampling' } });
  assert.match(text(r), /openai stand-in \(gpt-4\.1-mini\) answers: .*modern without sampling/);
  assert.equal((await requests(openai)).length, before + 1);
  await client.close();
  const log = gw.log();
  assert.match(log, /audit: sampling upstream=evgpt session=\w{8} link=client provider=- model="-" tokens_in=0 tokens_out=0 latency_ms=\d+ outcome=ok\b(?![^\n]*tried)/);
  assert.match(log, /audit: sampling upstream=evgpt session=\w{8} link=llm:gpt provider=openai .*outcome=ok tried="client: [^"]*"/);
});

test('sampling with tools, both ways, through each provider', async () => {
  const client = await connect();
  for (const [upstream, srv] of [['askgpt', openai], ['askclaude', anthropic], ['asklocal', ollama]]) {
    const first = [{ role: 'user', content: { type: 'text', text: 'Weather in Paris? [tool]' } }];
    const a = await askVia(client, upstream, { messages: first, tools: [weather], toolChoice: { mode: 'auto' }, maxTokens: 200 });
    assert.ok(a.result, `${upstream}: ${JSON.stringify(a)}`);
    assert.equal(a.result.stopReason, 'toolUse', upstream);
    const content = Array.isArray(a.result.content) ? a.result.content : [a.result.content];
    const use = content.find((c) => c.type === 'tool_use');
    assert.equal(use.name, 'get_weather', upstream);
    assert.deepEqual(use.input, { city: 'Paris' }, upstream);
    assert.ok(typeof use.id === 'string' && use.id !== '', upstream);
    const sent = (await lastRequest(srv)).body;
    if (srv === anthropic) {
      assert.deepEqual(sent.tools[0], { name: 'get_weather', description: 'Weather in a city', input_schema: weather.inputSchema });
      assert.deepEqual(sent.tool_choice, { type: 'auto' });
    } else {
      assert.deepEqual(sent.tools[0], { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weather.inputSchema } });
    }
    const second = [...first, { role: 'assistant', content },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: use.id, content: [{ type: 'text', text: '18 C, cloudy' }] }] }];
    const b = await askVia(client, upstream, { messages: second, tools: [weather], maxTokens: 200 });
    assert.ok(b.result, `${upstream}: ${JSON.stringify(b)}`);
    assert.match(JSON.stringify(b.result.content), /tool results: (get_weather=)?18 C, cloudy/, upstream);
    assert.equal(b.result.stopReason, 'endTurn', upstream);
    const back = (await lastRequest(srv)).body.messages;
    if (srv === openai) assert.deepEqual(back.at(-1), { role: 'tool', tool_call_id: use.id, content: '18 C, cloudy' });
    if (srv === anthropic) assert.deepEqual(back.at(-1).content[0], { type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: '18 C, cloudy' }] });
    if (srv === ollama) assert.deepEqual(back.at(-1), { role: 'tool', content: '18 C, cloudy', tool_name: 'get_weather' });
  }
  await client.close();
});

test('a streaming provider sends progress to an upstream that gave a token', async () => {
  const client = await connect();
  for (const upstream of ['askgpt', 'askclaude', 'asklocal']) {
    const a = await askVia(client, upstream, {
      messages: [{ role: 'user', content: { type: 'text', text: 'a long story [long]' } }], maxTokens: 500,
    }, true);
    assert.match(a.result.content.text, /piece 1 of a long answer\. .*piece 20 of a long answer\./, upstream);
    assert.ok(a.progress.length >= 2, `${upstream}: ${a.progress.length} progress notifications`);
    for (let i = 1; i < a.progress.length; i++) assert.ok(a.progress[i].progress > a.progress[i - 1].progress);
    assert.match(a.progress[0].message, /pieces received/);
  }
  await client.close();
});

test('model preferences choose among the provider\'s models', async () => {
  const client = await connect();
  const msg = [{ role: 'user', content: { type: 'text', text: 'which model?' } }];
  let a = await askVia(client, 'askgpt', { messages: msg, maxTokens: 10, modelPreferences: { hints: [{ name: 'gpt-4.1' }], intelligencePriority: 1 } });
  assert.equal((await lastRequest(openai)).body.model, 'gpt-4.1');
  assert.equal(a.result.model, 'gpt-4.1-2025-04-14');
  a = await askVia(client, 'askgpt', { messages: msg, maxTokens: 10, modelPreferences: { costPriority: 1 } });
  assert.equal((await lastRequest(openai)).body.model, 'gpt-4.1-mini');
  a = await askVia(client, 'askgpt', { messages: msg, maxTokens: 10, modelPreferences: { hints: [{ name: 'claude-3-opus' }] } });
  assert.equal((await lastRequest(openai)).body.model, 'gpt-4.1-mini', 'no hint matches: the provider\'s model');
  await client.close();
});

test('a provider that does not stream, and OpenAI\'s own max_completion_tokens', async () => {
  const client = await connect();
  const a = await askVia(client, 'askjson', { messages: [{ role: 'user', content: { type: 'text', text: 'hello json' } }], maxTokens: 42, stopSequences: ['END'], metadata: { team: 'qa', n: 5 } });
  assert.match(a.result.content.text, /answers: hello json/);
  const req = (await lastRequest(openai)).body;
  assert.equal(req.stream, undefined);
  assert.equal(req.max_completion_tokens, 42);
  assert.equal(req.max_tokens, undefined);
  assert.deepEqual(req.stop, ['END']);
  assert.equal(req.metadata, undefined, 'OpenAI refuses metadata without store');
  await client.close();
});

test('images go to providers that take them; audio to Anthropic is refused with the reason', async () => {
  const client = await connect();
  const png = 'iVBORw0KGgo=';
  let a = await askVia(client, 'askclaude', { messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image', data: png, mimeType: 'image/png' }] }], maxTokens: 20 });
  assert.ok(a.result, JSON.stringify(a));
  assert.deepEqual((await lastRequest(anthropic)).body.messages[0].content[1], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } });
  a = await askVia(client, 'asklocal', { messages: [{ role: 'user', content: [{ type: 'text', text: 'and this?' }, { type: 'image', data: png, mimeType: 'image/png' }] }], maxTokens: 20 });
  assert.match(a.result.content.text, /\[1 image\(s\)\]/);
  const before = (await requests(anthropic)).length;
  a = await askVia(client, 'askclaude', { messages: [{ role: 'user', content: { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' } }], maxTokens: 20 });
  assert.ok(a.error, JSON.stringify(a));
  assert.match(a.error.message, /llm:claude: a user message with audio content .*\(refused\)/);
  assert.equal((await requests(anthropic)).length, before, 'nothing was sent');
  await client.close();
});

test('audit lines, prompts only where asked, and mcpctl\'s counters', async () => {
  const client = await connect();
  await client.callTool({ name: 'evgpt__trigger-sampling-request', arguments: { prompt: 'secret-plan-zebra' } });
  await askVia(client, 'askgpt', { messages: [{ role: 'user', content: { type: 'text', text: 'logged-prompt-kiwi' } }], systemPrompt: 'sys-prompt-fig', maxTokens: 10 });
  await client.close();
  const log = gw.log();
  assert.ok(!log.includes('secret-plan-zebra'), 'a prompt is logged for an upstream without log_prompts');
  assert.match(log, /audit: sampling upstream=askgpt .* outcome=ok prompt="\[system\] sys-prompt-fig \[user\] logged-prompt-kiwi"/);
  const audits = log.split('\n').filter((l) => l.includes('audit: sampling upstream=evgpt'));
  assert.ok(audits.length >= 3 && audits.every((l) => !l.includes('prompt=')));
  const st = gw.status();
  const gpt = st.llm.find((p) => p.name === 'gpt');
  assert.equal(gpt.provider, 'openai');
  assert.equal(gpt.state, 'ready');
  assert.ok(gpt.requests >= 8 && gpt.answered === gpt.requests && gpt.errors === 0, JSON.stringify(gpt));
  assert.ok(gpt.tokens_in > 0 && gpt.tokens_out > 0);
  assert.equal(gpt.in_flight, 0);
  assert.equal(gpt.budget.tokens_used, gpt.tokens_in + gpt.tokens_out);
  const claude = st.llm.find((p) => p.name === 'claude');
  assert.equal(claude.refused + claude.errors, 1, 'the refused audio');
  const table = gw.mcpctl('status');
  assert.match(table, /^LLM\s+PROVIDER\s+STATE/m);
  assert.match(table, /^gpt\s+openai\s+ready\s/m);
  assert.match(table, /^local\s+ollama\s+ready\s/m);
  for (const out of [table, JSON.stringify(st)]) {
    assert.ok(!out.includes(OPENAI_KEY) && !out.includes(ANTHROPIC_KEY), 'mcpctl shows a key');
  }
});

test('an error page in Latin-1 is an error, and the provider stays up', async () => {
  const client = await connect();
  const before = gw.status().llm.find((p) => p.name === 'gpt').restarts;
  const r = await askVia(client, 'askgpt', { messages: [{ role: 'user', content: { type: 'text', text: '[latin1]' } }], maxTokens: 20 });
  assert.match(r.error?.message ?? '', /HTTP 502: <html><body>Caf\? ferm\?: the upstream is down/);
  const ok = await askVia(client, 'askgpt', { messages: [{ role: 'user', content: { type: 'text', text: 'still there?' } }], maxTokens: 20 });
  assert.ok(ok.result, JSON.stringify(ok));
  assert.equal(gw.status().llm.find((p) => p.name === 'gpt').restarts, before);
  await client.close();
});

test('a stream whose end was seen is kept when the connection is then lost', async () => {
  const client = await connect();
  const r = await askVia(client, 'askgpt', { messages: [{ role: 'user', content: { type: 'text', text: 'all of it [reset-after-done]' } }], maxTokens: 20 });
  assert.match(r.result?.content?.text ?? '', /answers: all of it/, JSON.stringify(r));
  await client.close();
});

test('-nv prints the key references, never the keys', () => {
  const out = execFileSync(bin.supervisord, ['-n', '-v', '-f', path.join(gw.dir, 'mcp-supervisord.conf')],
    { encoding: 'utf8', env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  assert.match(out, /api_key = "\$\{env:MCPS_TEST_OPENAI_KEY\}";/);
  assert.match(out, /api_key = "\$\{file:.*anthropic\.key\}";/);
  assert.ok(!out.includes(OPENAI_KEY) && !out.includes(ANTHROPIC_KEY));
});
