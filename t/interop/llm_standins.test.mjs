// SPDX-License-Identifier: ISC
// The LLM vendor stand-ins (t/fixtures/llm-*.mjs) checked with each
// vendor's official client from npm (openai, @anthropic-ai/sdk, ollama,
// pinned in t/package-lock.json): JSON and streamed answers, tool calls
// and their results, and the vendor's error shapes for 400, 401, 429 and
// 500, as the client reads them.  The gateway's tests trust the stand-ins
// only as far as this file shows them to speak the real APIs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import { startNodeServer, srcdir } from '../lib/gateway.mjs';

const KEY = 'sk-standin-check-4e1d0c9a7b';
const fixture = (name) => path.join(srcdir, 't/fixtures', name);
const weather = {
  name: 'get_weather',
  description: 'Weather in a city',
  schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
let openaiSrv, anthropicSrv, ollamaSrv;

before(async () => {
  const env = { STANDIN_KEY: KEY };
  [openaiSrv, anthropicSrv, ollamaSrv] = await Promise.all([
    startNodeServer([fixture('llm-openai.mjs')], { env }),
    startNodeServer([fixture('llm-anthropic.mjs')], { env }),
    startNodeServer([fixture('llm-ollama.mjs')], { env }),
  ]);
});
after(async () => {
  await Promise.all([openaiSrv?.stop(), anthropicSrv?.stop(), ollamaSrv?.stop()]);
});

const openai = (key = KEY) => new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${openaiSrv.port}/v1`, maxRetries: 0 });
const anthropic = (key = KEY) => new Anthropic({ apiKey: key, baseURL: `http://127.0.0.1:${anthropicSrv.port}`, maxRetries: 0 });
const ollama = (key = KEY) => new Ollama({ host: `http://127.0.0.1:${ollamaSrv.port}`, headers: { Authorization: `Bearer ${key}` } });

test('openai: a JSON answer, as the client reads it', async () => {
  const c = await openai().chat.completions.create({
    model: 'gpt-4.1-mini', max_completion_tokens: 50, temperature: 0.5, stop: ['END'],
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello there' }],
  });
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.model, 'gpt-4.1-mini-2025-04-14');
  assert.match(c.choices[0].message.content, /answers: hello there/);
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.ok(c.usage.prompt_tokens > 0 && c.usage.completion_tokens > 0);
});

test('openai: a streamed answer and its usage', async () => {
  const s = await openai().chat.completions.create({
    model: 'gpt-4.1-mini', max_tokens: 50, stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'tell me [long]' }],
  });
  let text = '';
  let usage;
  let finish;
  let n = 0;
  for await (const chunk of s) {
    n++;
    text += chunk.choices[0]?.delta?.content ?? '';
    finish ??= chunk.choices[0]?.finish_reason ?? undefined;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(n > 20, `${n} chunks`);
  assert.match(text, /piece 20 of a long answer/);
  assert.equal(finish, 'stop');
  assert.ok(usage.completion_tokens > 0);
});

test('openai: a streamed tool call and its result', async () => {
  const client = openai();
  const tools = [{ type: 'function', function: { name: weather.name, description: weather.description, parameters: weather.schema } }];
  const stream = client.chat.completions.stream({
    model: 'gpt-4.1', max_completion_tokens: 100, tools, tool_choice: 'required',
    messages: [{ role: 'user', content: 'weather? [tool]' }],
  });
  const final = await stream.finalChatCompletion();
  const call = final.choices[0].message.tool_calls[0];
  assert.equal(final.choices[0].finish_reason, 'tool_calls');
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
  const c = await client.chat.completions.create({
    model: 'gpt-4.1', max_completion_tokens: 100, tools,
    messages: [
      { role: 'user', content: 'weather? [tool]' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' },
    ],
  });
  assert.match(c.choices[0].message.content, /tool results: sunny, 21 C/);
});

test('openai: the error shapes of 400, 401, 429 and 500', async () => {
  const base = { model: 'gpt-4.1-mini', max_completion_tokens: 10 };
  await assert.rejects(openai().chat.completions.create({ ...base, messages: [{ role: 'user', content: 'x' }], bogus: 1 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.error.type === 'invalid_request_error' && /Unrecognized request argument supplied: bogus/.test(e.message));
  await assert.rejects(openai().chat.completions.create({ ...base, messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] }),
    (e) => e instanceof OpenAI.BadRequestError && /preceeding message with 'tool_calls'/.test(e.message));
  await assert.rejects(openai().chat.completions.create({ model: 'gpt-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'max_tokens');
  await assert.rejects(openai('sk-wrong-key-0000').chat.completions.create({ ...base, messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.AuthenticationError && e.status === 401 && e.code === 'invalid_api_key');
  await assert.rejects(openai().chat.completions.create({ ...base, messages: [{ role: 'user', content: '[error:429]' }] }),
    (e) => e instanceof OpenAI.RateLimitError && e.status === 429 && e.code === 'rate_limit_exceeded');
  await assert.rejects(openai().chat.completions.create({ ...base, messages: [{ role: 'user', content: '[error:500]' }] }),
    (e) => e instanceof OpenAI.InternalServerError && e.status === 500 && e.error.type === 'server_error');
  const s = await openai().chat.completions.create({ ...base, stream: true, messages: [{ role: 'user', content: '[midstream]' }] });
  await assert.rejects((async () => { for await (const c of s) void c; })(), (e) => e instanceof OpenAI.APIError && /server had an error/.test(e.message));
});

test('anthropic: a JSON answer, as the client reads it', async () => {
  const m = await anthropic().messages.create({
    model: 'claude-sonnet-4-5', max_tokens: 50, system: 'Be brief.', temperature: 0.3, stop_sequences: ['END'],
    metadata: { user_id: 'u-1' }, messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
  });
  assert.equal(m.type, 'message');
  assert.equal(m.model, 'claude-sonnet-4-5-20250929');
  assert.equal(m.stop_reason, 'end_turn');
  assert.match(m.content[0].text, /answers: hello there/);
  assert.ok(m.usage.input_tokens > 0 && m.usage.output_tokens > 0);
});

test('anthropic: a streamed answer, and a streamed tool use with its result', async () => {
  const client = anthropic();
  const s = client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'tell me [long]' }] });
  let deltas = 0;
  s.on('text', () => { deltas++; });
  const m = await s.finalMessage();
  assert.equal(deltas, 20);
  assert.match(m.content[0].text, /piece 20 of a long answer/);
  const tools = [{ name: weather.name, description: weather.description, input_schema: weather.schema }];
  const t = await client.messages.stream({
    model: 'claude-sonnet-4-5', max_tokens: 100, tools, tool_choice: { type: 'any' },
    messages: [{ role: 'user', content: 'weather? [tool]' }],
  }).finalMessage();
  assert.equal(t.stop_reason, 'tool_use');
  const use = t.content.find((c) => c.type === 'tool_use');
  assert.equal(use.name, 'get_weather');
  assert.deepEqual(use.input, { city: 'Paris' });
  const r = await client.messages.create({
    model: 'claude-sonnet-4-5', max_tokens: 100, tools,
    messages: [
      { role: 'user', content: 'weather? [tool]' },
      { role: 'assistant', content: t.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'sunny, 21 C' }] }] },
    ],
  });
  assert.match(r.content[0].text, /tool results: sunny, 21 C/);
});

test('anthropic: the error shapes of 400, 401, 429 and 500', async () => {
  const base = { model: 'claude-sonnet-4-5', max_tokens: 10 };
  await assert.rejects(anthropic().messages.create({ ...base, messages: [{ role: 'system', content: 'x' }] }),
    (e) => e instanceof Anthropic.BadRequestError && e.error.error.type === 'invalid_request_error' && /top-level `system` parameter/.test(e.message));
  await assert.rejects(anthropic().messages.create({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'x' }] }] }),
    (e) => e instanceof Anthropic.BadRequestError && /corresponding `tool_use` block/.test(e.message));
  await assert.rejects(anthropic('sk-ant-wrong').messages.create({ ...base, messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof Anthropic.AuthenticationError && e.status === 401 && e.error.error.type === 'authentication_error');
  await assert.rejects(anthropic().messages.create({ ...base, messages: [{ role: 'user', content: '[error:429]' }] }),
    (e) => e instanceof Anthropic.RateLimitError && e.error.error.type === 'rate_limit_error');
  await assert.rejects(anthropic().messages.create({ ...base, messages: [{ role: 'user', content: '[error:500]' }] }),
    (e) => e instanceof Anthropic.InternalServerError && e.error.error.type === 'api_error');
  await assert.rejects(anthropic().messages.stream({ ...base, messages: [{ role: 'user', content: '[midstream]' }] }).finalMessage(),
    (e) => /Overloaded/.test(e.message));
});

test('ollama: a JSON answer and a streamed one, as the client reads them', async () => {
  const r = await ollama().chat({
    model: 'llama3.2', stream: false, options: { num_predict: 50, temperature: 0.2, stop: ['END'] },
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello there', images: ['iVBORw0KGgo='] }],
  });
  assert.equal(r.done, true);
  assert.equal(r.done_reason, 'stop');
  assert.match(r.message.content, /answers: hello there \[1 image\(s\)\]/);
  assert.ok(r.prompt_eval_count > 0 && r.eval_count > 0);
  const s = await ollama().chat({ model: 'llama3.2', stream: true, messages: [{ role: 'user', content: 'tell me [long]' }] });
  let text = '';
  let last;
  for await (const part of s) { text += part.message.content; last = part; }
  assert.match(text, /piece 20 of a long answer/);
  assert.equal(last.done, true);
});

test('ollama: tool calls and their results', async () => {
  const tools = [{ type: 'function', function: { name: weather.name, description: weather.description, parameters: weather.schema } }];
  const r = await ollama().chat({ model: 'qwen3:8b', stream: false, tools, messages: [{ role: 'user', content: 'weather? [tool]' }] });
  assert.equal(r.message.tool_calls[0].function.name, 'get_weather');
  assert.deepEqual(r.message.tool_calls[0].function.arguments, { city: 'Paris' });
  const s = await ollama().chat({
    model: 'qwen3:8b', stream: true, tools,
    messages: [{ role: 'user', content: 'weather? [tool]' }, r.message, { role: 'tool', tool_name: 'get_weather', content: 'sunny, 21 C' }],
  });
  let text = '';
  for await (const part of s) text += part.message.content;
  assert.match(text, /tool results: get_weather=sunny, 21 C/);
});

test('ollama: the error shapes of 400, 401, 404, 429 and 500', async () => {
  const chat = (content, opts = {}) => ollama(opts.key).chat({ model: opts.model ?? 'llama3.2', stream: false, messages: [{ role: 'user', content }] });
  const is = (status, re) => (e) => e.name === 'ResponseError' && e.status_code === status && re.test(e.error);
  await assert.rejects(chat('[error:400]'), is(400, /told to refuse/));
  await assert.rejects(chat('x', { key: 'wrong' }), is(401, /unauthorized/));
  await assert.rejects(chat('x', { model: 'nosuchmodel' }), is(404, /model "nosuchmodel" not found/));
  await assert.rejects(chat('[error:429]'), is(429, /usage limit/));
  await assert.rejects(chat('[error:500]'), is(500, /llama runner process has terminated/));
  const s = await ollama().chat({ model: 'llama3.2', stream: true, messages: [{ role: 'user', content: '[midstream]' }] });
  await assert.rejects((async () => { for await (const p of s) void p; })(), /unexpected EOF/);
});
