#!/usr/bin/env node
// SPDX-License-Identifier: ISC
// Smoke test of fixture-server.mjs over stdio (no gateway, no HTTP): spawns the
// fixture with the current node, exercises every tool/resource/prompt with the
// SDK client, prints one line per item and exits non-zero on any surprise.
//   node t/conformance/fixture-smoke.mjs [path/to/fixture-server.mjs]
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const fixture = process.argv[2] ?? fileURLToPath(new URL('./fixture-server.mjs', import.meta.url));
let bad = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) bad++;
};

const c = new Client({ name: 'fixture-smoke', version: '1' }, { capabilities: { sampling: {}, elicitation: {}, roots: {} } });
const logs = [];
c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
c.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm', stopReason: 'endTurn',
}));
c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///tmp/smoke', name: 'smoke' }] }));
// answers keyed by the first property of the requested schema (valid for each schema)
const answers = {
  username: { username: 'u', email: 'e@x' },
  name: { name: 'Jane Smith', age: 25, score: 88, status: 'inactive', verified: false },
  untitledSingle: { untitledSingle: 'option1', titledSingle: 'value1', legacyEnum: 'opt1', untitledMulti: ['option1'], titledMulti: ['value2'] },
};
c.setRequestHandler(ElicitRequestSchema, async (r) => ({
  action: 'accept', content: answers[Object.keys(r.params.requestedSchema.properties)[0]],
}));
await c.connect(new StdioClientTransport({ command: process.execPath, args: [fixture], stderr: 'inherit' }));

const { tools } = await c.listTools();
check(tools.every((t) => t.name && t.description && t.inputSchema), `tools/list: ${tools.length} tools, all described`);
const js = tools.find((t) => t.name === 'json_schema_2020_12_tool')?.inputSchema;
check(js?.$schema && js?.$defs?.address && js?.additionalProperties === false, 'json_schema_2020_12_tool schema verbatim');
for (const t of tools) {
  const args = { test_sampling: { prompt: 'p' }, test_elicitation: { message: 'm' }, test_header_param: { region: 'r' } }[t.name] ?? {};
  const progress = [];
  logs.length = 0;
  const r = await c.callTool({ name: t.name, arguments: args }, undefined, { onprogress: (p) => progress.push(p.progress) });
  const expectError = t.name === 'test_error_handling';
  let ok = !!r.isError === expectError && r.content?.length > 0;
  if (t.name === 'test_tool_with_progress') ok &&= progress.join() === '0,50,100';
  if (t.name === 'test_tool_with_logging') ok &&= logs.length === 3;
  check(ok, `${t.name}: ${r.content.map((x) => x.type + (x.text ? `:${x.text.slice(0, 70)}` : '')).join(' | ')}`);
}
await c.setLoggingLevel('warning');
logs.length = 0;
await c.callTool({ name: 'test_tool_with_logging', arguments: {} });
check(logs.length === 0, 'logging/setLevel warning filters info logs');

const res = (await c.listResources()).resources.map((r) => r.uri);
check(res.length === 3, `resources/list: ${res}`);
for (const uri of ['test://static-text', 'test://static-binary', 'test://watched-resource', 'test://template/123/data']) {
  const [x] = (await c.readResource({ uri })).contents;
  check(x.uri === uri && x.mimeType && (x.text || x.blob), `read ${uri}`);
}
await c.readResource({ uri: 'test://nope' }).then(() => check(false, 'unknown resource errors'), (e) => check(e.code === -32002, 'unknown resource -> -32002'));
check(JSON.stringify(await c.subscribeResource({ uri: 'test://watched-resource' })) === '{}', 'subscribe -> {}');
check(JSON.stringify(await c.unsubscribeResource({ uri: 'test://watched-resource' })) === '{}', 'unsubscribe -> {}');
for (const [name, a] of [
  ['test_simple_prompt'],
  ['test_prompt_with_arguments', { arg1: 'hello', arg2: 'world' }],
  ['test_prompt_with_embedded_resource', { resourceUri: 'test://example-resource' }],
  ['test_prompt_with_image'],
]) {
  const m = (await c.getPrompt({ name, arguments: a })).messages;
  check(m.length > 0, `prompt ${name}: ${m.map((x) => x.content.type).join(',')}`);
}
const comp = await c.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'pa' } });
check(Array.isArray(comp.completion.values), `complete arg1 'pa': ${comp.completion.values}`);
check(JSON.stringify(await c.ping()) === '{}', 'ping -> {}');
await c.callTool({ name: 'nope', arguments: {} }).then(() => check(false, 'unknown tool errors'), (e) => check(e.code === -32602, 'unknown tool -> -32602'));
await c.close();
console.log(bad ? `${bad} failure(s)` : 'all ok');
process.exit(bad ? 1 : 0);
