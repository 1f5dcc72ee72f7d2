// SPDX-License-Identifier: ISC
// Tools offered by clients, and who may do what.  The owner is an SDK
// client over the stdio bridge (as an editor would be) that registers a
// tool and answers tools/call with the SDK's own request handler; callers
// are SDK clients over Streamable HTTP.  Answer, error, progress and
// cancellation; a timeout that cancels at the owner; an owner that leaves
// mid-call; answers with unknown or finished correlation ids; malformed
// answers.  Then named clients with tokens: what each sees and may call,
// who may register; and the lock file.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolRequestSchema, ResultSchema, ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, demo, q, bin, sleep } from '../lib/gateway.mjs';
import { post } from '../lib/modern.mjs';

const TOKENS = {
  admin: 'admin-token-0123456789abcdef',
  nvim: 'nvim-token-0123456789abcdef',
  viewer: 'viewer-token-0123456789abcdef',
};
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const until = async (pred, ms = 5000) => { const t = Date.now() + ms; while (!pred() && Date.now() < t) await sleep(25); return pred(); };
let gw, dir;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcps-ctools-'));
  gw = await startGateway({
    globals: `client_tool_timeout = 2; auth_tokens = [ ${q(TOKENS.admin)} ];
clients = (
  { name = "nvim"; token = ${q(TOKENS.nvim)}; register = true; deny = [ "demo__add" ]; },
  { name = "viewer"; token = ${q(TOKENS.viewer)}; allow = [ "demo__echo", "demo__sleep", "nvim__*", "demo://readme", "demo__greeting" ]; deny = [ "nvim__secret" ]; }
);
ws_lockfile = ${q(path.join(dir, 'gateway.lock'))};`,
    servers: [demo('demo')],
  });
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  assert.ok(!existsSync(path.join(dir, 'gateway.lock')), 'the lock file is removed at exit');
  rmSync(dir, { recursive: true, force: true });
});

// The owner: an SDK client over the bridge with a tools/call handler.
async function owner(token, handler) {
  const transport = new StdioClientTransport({ command: bin.mcpctl, args: ['connect', `ws://${gw.status().listen}/ws`], env: { ...process.env, MCPCTL_TOKEN: token }, stderr: 'pipe' });
  const client = new Client({ name: 'my editor', version: '1' });
  client.setRequestHandler(CallToolRequestSchema, handler);
  await client.connect(transport);
  return client;
}
const register = (client, tools) => client.request({ method: 'tools/register', params: { tools } }, ResultSchema);
const tool = (name, description = `tool ${name}`) => ({ name, description, inputSchema: { type: 'object', properties: { path: { type: 'string' } } } });

// A caller over Streamable HTTP with a token.
async function caller(token, name = 'caller') {
  const seen = { toolsChanged: 0 };
  const client = new Client({ name, version: '1' });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.toolsChanged++; });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return { client, seen };
}

test('a registered tool answers, fails, reports progress and is cancelled', async () => {
  const asked = [];
  let cancelled = null;
  const ed = await owner(TOKENS.nvim, async (req, extra) => {
    asked.push(req.params);
    if (req.params.name === 'fail') throw new Error('no such file');
    if (req.params.name === 'slow') {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: req.params._meta.progressToken, progress: 1, total: 2 } });
      await new Promise((r) => { extra.signal.addEventListener('abort', () => { cancelled = extra.signal.reason ?? 'aborted'; r(); }); });
      return { content: [] };
    }
    return { content: [{ type: 'text', text: `opened ${req.params.arguments.path}` }] };
  });
  const { client, seen } = await caller(TOKENS.admin);
  const r = await register(ed, [tool('open_file'), tool('fail'), tool('slow'), { name: 'no schema' }]);
  assert.deepEqual(r.registered, ['nvim__open_file', 'nvim__fail', 'nvim__slow'], 'prefixed with the token\'s client name');
  assert.equal(r.refused.length, 1);
  assert.ok(await until(() => seen.toolsChanged > 0), 'other sessions are told');
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === 'nvim__open_file' && t.description === 'tool open_file'));
  // An answer, with the caller's own id.
  assert.equal(text(await client.callTool({ name: 'nvim__open_file', arguments: { path: '/etc/motd' } })), 'opened /etc/motd');
  assert.equal(asked[0].name, 'open_file', 'the owner is asked with its own name');
  assert.deepEqual(asked[0].arguments, { path: '/etc/motd' });
  // An error.
  await assert.rejects(client.callTool({ name: 'nvim__fail', arguments: {} }), /no such file/);
  // Progress with the caller's token, then a cancellation that reaches the owner.
  const progress = [];
  const ac = new AbortController();
  const slow = client.callTool({ name: 'nvim__slow', arguments: {} }, undefined, { signal: ac.signal, onprogress: (p) => progress.push(p.progress) });
  assert.ok(await until(() => progress.length === 1), 'progress reaches the caller');
  ac.abort('changed my mind');
  await assert.rejects(slow, /changed my mind/);
  assert.ok(await until(() => cancelled !== null), 'the owner is told');
  await client.close();
  await ed.close();
});

test('a 2026-07-28 caller gets a registered tool\'s answer with resultType', async () => {
  const ed = await owner(TOKENS.nvim, async (req) => ({ content: [{ type: 'text', text: `modern ${req.params.arguments.path}` }] }));
  await register(ed, [tool('look')]);
  const r = await post(gw.url, 'tools/call', { name: 'nvim__look', arguments: { path: '/srv' } }, { token: TOKENS.admin });
  assert.equal(r.status, 200);
  assert.equal(r.body.result.resultType, 'complete', JSON.stringify(r.body));
  assert.equal(text(r.body.result), 'modern /srv');
  await ed.close();
});

test('a timeout fails the call and cancels it at the owner', async () => {
  let cancelled = false;
  const ed = await owner(TOKENS.nvim, async (req, extra) => new Promise((r) => {
    extra.signal.addEventListener('abort', () => { cancelled = true; r({ content: [] }); });
  }));
  await register(ed, [tool('stuck')]);
  const { client } = await caller(TOKENS.admin);
  await assert.rejects(client.callTool({ name: 'nvim__stuck', arguments: {} }), (e) => e.code === -32001 && /did not answer within 2 s/.test(e.message));
  assert.ok(await until(() => cancelled), 'notifications/cancelled reached the owner');
  await client.close();
  await ed.close();
});

test('an owner that leaves mid-call: the caller hears at once, the tools are withdrawn', async () => {
  const ed = await owner(TOKENS.nvim, async () => new Promise(() => {}));
  await register(ed, [tool('hangs')]);
  const { client, seen } = await caller(TOKENS.admin);
  const call = client.callTool({ name: 'nvim__hangs', arguments: {} }).then(() => null, (e) => e);
  await until(() => gw.log().includes('nvim__hangs to client session'));
  const changes = seen.toolsChanged;
  const t0 = Date.now();
  await ed.close();
  assert.match(String(await call), /client nvim disconnected/);
  assert.ok(Date.now() - t0 < 1000, 'within a second');
  assert.ok(await until(() => seen.toolsChanged > changes));
  const { tools } = await client.listTools();
  assert.ok(!tools.some((t) => t.name === 'nvim__hangs'));
  await client.close();
});

test('answers with unknown or finished correlation ids are dropped; malformed ones fail the call', async () => {
  // A raw owner over WebSocket, with the admin token.
  const ws = new WebSocket(`ws://${gw.status().listen}/ws`, 'mcp', { headers: { authorization: `Bearer ${TOKENS.admin}` } });
  await new Promise((r) => ws.on('open', r));
  const inbox = [];
  ws.on('message', (d) => inbox.push(JSON.parse(d.toString())));
  const send = (m) => ws.send(JSON.stringify(m));
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw owner', version: '1' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/register', params: { name: 'echo_back', description: 'the seed\'s form', input_schema: { type: 'object' } } });
  assert.ok(await until(() => inbox.some((m) => m.id === 2)));
  assert.deepEqual(inbox.find((m) => m.id === 2).result.registered, ['_raw_owner__echo_back']);
  const { client } = await caller(TOKENS.admin);
  const call = client.callTool({ name: '_raw_owner__echo_back', arguments: { x: 1 } });
  assert.ok(await until(() => inbox.some((m) => m.method === 'tools/call')));
  const asked = inbox.find((m) => m.method === 'tools/call');
  send({ jsonrpc: '2.0', id: 999999, result: { content: [{ type: 'text', text: 'for nobody' }] } });
  send({ jsonrpc: '2.0', id: asked.id, result: { content: [{ type: 'text', text: 'answered' }] } });
  assert.equal(text(await call), 'answered');
  send({ jsonrpc: '2.0', id: asked.id, result: { content: [{ type: 'text', text: 'twice' }] } });
  await sleep(200);
  assert.match(gw.log(), /an answer to no request of ours \(id 999999\), dropped/);
  // A malformed answer: its result is not an object.
  const bad = client.callTool({ name: '_raw_owner__echo_back', arguments: {} });
  assert.ok(await until(() => inbox.filter((m) => m.method === 'tools/call').length === 2));
  const second = inbox.filter((m) => m.method === 'tools/call')[1];
  send({ jsonrpc: '2.0', id: second.id, result: 'not an object' });
  await assert.rejects(bad, /malformed answer/);
  // The caller got nothing else: the SDK would have thrown on a stray message.
  await client.close();
  ws.close();
});

test('named clients see and call only what they may; only some may register', async () => {
  const ed = await owner(TOKENS.nvim, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
  await register(ed, [tool('open_file'), tool('secret')]);
  const viewer = await caller(TOKENS.viewer, 'viewer');
  const names = (await viewer.client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['demo__echo', 'demo__sleep', 'nvim__open_file'], 'allow, less deny');
  assert.equal(text(await viewer.client.callTool({ name: 'nvim__open_file', arguments: {} })), 'ok');
  await assert.rejects(viewer.client.callTool({ name: 'demo__add', arguments: { a: 1, b: 2 } }), /unknown tool/);
  await assert.rejects(viewer.client.callTool({ name: 'nvim__secret', arguments: {} }), /unknown tool/);
  const { resources } = await viewer.client.listResources();
  assert.deepEqual(resources.map((r) => r.uri), ['demo://readme']);
  await assert.rejects(viewer.client.readResource({ uri: 'demo://counter' }), /Resource not found/);
  assert.deepEqual((await viewer.client.listPrompts()).prompts.map((p) => p.name), ['demo__greeting']);
  await assert.rejects(viewer.client.request({ method: 'tools/register', params: { tools: [tool('mine')] } }, ResultSchema), /may not register/);
  // nvim may see everything but demo__add; the admin (unnamed) everything.
  const nvim = await caller(TOKENS.nvim, 'nvim-caller');
  const nv = (await nvim.client.listTools()).tools.map((t) => t.name);
  assert.ok(!nv.includes('demo__add') && nv.includes('demo__echo') && nv.includes('nvim__secret'));
  const admin = await caller(TOKENS.admin, 'admin');
  const all = (await admin.client.listTools()).tools.map((t) => t.name);
  assert.ok(all.includes('demo__add') && all.includes('nvim__secret'));
  for (const c of [viewer, nvim, admin]) await c.client.close();
  await ed.close();
});

test('the lock file: 0600, the URL and a fresh token that works', async () => {
  const file = path.join(dir, 'gateway.lock');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const lock = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(lock.url, `ws://${gw.status().listen}/ws`);
  assert.match(lock.authToken, /^[0-9a-f]{64}$/);
  const ws = new WebSocket(lock.url, 'mcp', { headers: { authorization: `Bearer ${lock.authToken}` } });
  assert.ok(await new Promise((r) => { ws.on('open', () => r(true)); ws.on('unexpected-response', () => r(false)); }));
  ws.close();
});
