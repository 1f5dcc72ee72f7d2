// SPDX-License-Identifier: ISC
// Clients over WebSocket, against peers we did not write: the SDK's
// WebSocketClientTransport (on Node 22's global WebSocket, undici's) and the
// ws package.  A WebSocket session is a session like any other: initialize,
// the merged catalog, sampling, elicitation and roots from the reference
// server reaching the client that caused them, progress, logs,
// subscriptions, list changes, cancellation; it ends with its connection.
// Then the edges: the handshake's checks, binary and invalid frames,
// oversized messages, heartbeats and dead peers.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
  LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, demo, q, nodeModules, sleep } from '../lib/gateway.mjs';

const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const ev = (name, extra = '') =>
  `{ name = ${q(name)}; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(everything)}, "stdio" ]; ${extra} }`;
const TOKEN = 'ws-test-token-0123456789';
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
// gw has no tokens, so the SDK's transport (Node 22's WebSocket, which
// cannot send headers) reaches it as it is; authed has one.
let gw, wsUrl, authed, authedUrl;

before(async () => {
  gw = await startGateway({
    globals: `ws_ping_interval = 1; max_body = "64k";`,
    servers: [demo('demo'), ev('ev'), ev('evs', 'isolation = "per-session";')],
  });
  wsUrl = `ws://${gw.status().listen}/ws`;
  authed = await startGateway({ globals: `auth_tokens = [ ${q(TOKEN)} ];`, servers: [demo('demo')] });
  authedUrl = `ws://${authed.status().listen}/ws`;
  await gw.waitFor((s) => s.upstreams.find((u) => u.name === 'ev').tools >= 15, 'conditional tools');
});
after(async () => {
  assert.equal(await gw.stop(), 0);
  assert.equal(await authed.stop(), 0);
});

// An SDK client over the SDK's own WebSocket transport.
async function sdkClient(name, capabilities = {}) {
  const seen = { sampling: 0, elicitation: 0, roots: 0, logs: [], updated: [], toolsChanged: 0 };
  const client = new Client({ name, version: '1' }, { capabilities });
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      seen.sampling++;
      return { role: 'assistant', content: { type: 'text', text: `sampled by ${name}` }, model: 'm' };
    });
  }
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      seen.elicitation++;
      const content = {};
      for (const [k, v] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
        if (v.type === 'string') content[k] = v.enum ? v.enum[0] : (v.format === 'email' ? 'a@b.example' : v.format === 'date' ? '2026-01-01' : v.format === 'uri' ? 'https://example.com' : 'x');
        else if (v.type === 'integer' || v.type === 'number') content[k] = v.minimum ?? 1;
        else if (v.type === 'boolean') content[k] = true;
        else if (v.type === 'array') content[k] = v.items?.enum ? [v.items.enum[0]] : (v.items?.anyOf ? [v.items.anyOf[0].const] : []);
      }
      return { action: 'accept', content };
    });
  }
  if (capabilities.roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.roots++;
      return { roots: [{ uri: 'file:///srv/ws-root', name: 'root' }] };
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { seen.logs.push(n.params.data); });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { seen.updated.push(n.params.uri); });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.toolsChanged++; });
  const transport = new WebSocketClientTransport(new URL(wsUrl));
  await client.connect(transport);
  return { client, seen, transport };
}

// A raw ws client (of the authed gateway with opts.url); resolves when open.
function rawWs(opts = {}) {
  const ws = new WebSocket(opts.url ?? wsUrl, opts.protocols ?? 'mcp', {
    headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
    maxPayload: 1 << 24,
  });
  const events = { messages: [], close: null, pings: 0, error: null, status: null };
  ws.on('message', (d) => events.messages.push(JSON.parse(d.toString())));
  ws.on('close', (code, reason) => { events.close = { code, reason: reason.toString() }; });
  ws.on('ping', () => { events.pings++; });
  ws.on('unexpected-response', (req, res) => { events.status = res.statusCode; ws.terminate(); });
  ws.on('error', (e) => { events.error = e; });
  const opened = new Promise((resolve) => { ws.on('open', () => resolve(true)); ws.on('close', () => resolve(false)); ws.on('error', () => resolve(false)); });
  return { ws, events, opened };
}
const until = async (pred, ms = 5000) => { const t = Date.now() + ms; while (!pred() && Date.now() < t) await sleep(25); return pred(); };

test('the SDK over WebSocket: catalog, calls, progress, logs, subscriptions, list changes', async () => {
  const { client, seen } = await sdkClient('sdk-ws');
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === 'demo__echo') && tools.some((t) => t.name === 'ev__echo'));
  assert.equal(text(await client.callTool({ name: 'demo__echo', arguments: { text: 'über ws' } })), 'über ws');
  const progress = [];
  assert.equal(text(await client.callTool({ name: 'demo__sleep', arguments: { ms: 300, steps: 3 } }, undefined,
    { onprogress: (p) => progress.push(p.progress) })), 'slept 300 ms');
  assert.ok(progress.length >= 2, `progress ${progress}`);
  await client.setLoggingLevel('warning');
  await client.callTool({ name: 'demo__log', arguments: { level: 'error', message: 'over ws', count: 2 } });
  await client.callTool({ name: 'demo__log', arguments: { level: 'info', message: 'filtered out' } });
  await until(() => seen.logs.length >= 2);
  assert.deepEqual(seen.logs, ['over ws', 'over ws']);
  await client.subscribeResource({ uri: 'demo://counter' });
  await client.callTool({ name: 'demo__touch', arguments: {} });
  await client.callTool({ name: 'demo__toggle_tool', arguments: {} });
  assert.ok(await until(() => seen.updated.length > 0 && seen.toolsChanged > 0));
  assert.deepEqual(seen.updated, ['demo://counter']);
  await client.callTool({ name: 'demo__toggle_tool', arguments: {} });
  const read = await client.readResource({ uri: 'demo://readme' });
  assert.ok(read.contents.length > 0);
  await client.close();
});

test('sampling, elicitation and roots from the reference server over WebSocket', async () => {
  const { client, seen } = await sdkClient('able-ws', { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } });
  assert.match(text(await client.callTool({ name: 'ev__trigger-sampling-request', arguments: { prompt: 'q' } })), /sampled by able-ws/);
  assert.match(text(await client.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} })), /accept/i);
  assert.match(text(await client.callTool({ name: 'evs__get-roots-list', arguments: {} })), /ws-root/);
  assert.equal(seen.sampling, 1);
  assert.equal(seen.elicitation, 1);
  assert.ok(seen.roots >= 1);
  await client.close();
});

test('cancelling a call over WebSocket reaches the upstream', async () => {
  const { client } = await sdkClient('cancel-ws');
  const ac = new AbortController();
  const call = client.callTool({ name: 'demo__sleep', arguments: { ms: 20000 } }, undefined, { signal: ac.signal });
  assert.ok(await until(() => gw.upstream('demo').pending === 1), 'the call is in flight');
  ac.abort('stop');
  await assert.rejects(call, /stop/);
  assert.ok(await until(() => gw.upstream('demo').pending === 0), 'nothing pending');
  await client.close();
});

test('closing the WebSocket ends the session as a DELETE would', async () => {
  const before = gw.status().sessions;
  const { client } = await sdkClient('leaving-ws');
  assert.equal(gw.status().sessions, before + 1);
  client.callTool({ name: 'demo__sleep', arguments: { ms: 20000 } }).catch(() => {});
  // (The session's first call waits for its per-session instance's list.)
  assert.ok(await until(() => gw.upstream('demo').pending === 1), 'the call is in flight');
  await client.close();
  assert.ok(await until(() => gw.status().sessions === before && gw.upstream('demo').pending === 0), 'session and call gone');
  assert.match(gw.log(), /closed \(WebSocket closed\)/);
});

test('the handshake is checked before the upgrade', async () => {
  const noToken = rawWs({ url: authedUrl });
  assert.equal(await noToken.opened, false);
  assert.equal(noToken.events.status, 401, 'no token: 401 before the upgrade');
  const badToken = rawWs({ url: authedUrl, token: 'not-the-token-at-all-0000' });
  assert.equal(await badToken.opened, false);
  assert.equal(badToken.events.status, 401);
  const withToken = rawWs({ url: authedUrl, token: TOKEN });
  assert.ok(await withToken.opened, 'the right token opens it');
  withToken.ws.close();
  const noMcp = rawWs({ protocols: 'chat' });
  assert.equal(await noMcp.opened, false);
  assert.equal(noMcp.events.status, 400);
  const plain = await fetch(`http://${gw.status().listen}/ws`);
  assert.equal(plain.status, 426);
  const origin = new WebSocket(wsUrl, 'mcp', { origin: 'http://evil.example' });
  origin.on('error', () => {});
  const status = await new Promise((r) => { origin.on('unexpected-response', (req, res) => { r(res.statusCode); origin.terminate(); }); origin.on('open', () => r(101)); });
  assert.equal(status, 403);
});

test('binary frames, invalid UTF-8 and oversized messages close with their codes', async () => {
  const bin = rawWs();
  assert.ok(await bin.opened);
  bin.ws.send(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}'), { binary: true });
  assert.ok(await until(() => bin.events.close !== null));
  assert.equal(bin.events.close.code, 1003);
  const utf = rawWs();
  assert.ok(await utf.opened);
  utf.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
  assert.ok(await until(() => utf.events.close !== null));
  assert.equal(utf.events.close.code, 1007);
  const big = rawWs();
  assert.ok(await big.opened);
  big.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70000) } }));
  assert.ok(await until(() => big.events.close !== null));
  assert.equal(big.events.close.code, 1009);
  // A message that is not JSON-RPC is answered, not closed.
  const bad = rawWs();
  assert.ok(await bad.opened);
  bad.ws.send('not json');
  assert.ok(await until(() => bad.events.messages.length > 0));
  assert.equal(bad.events.messages[0].error.code, -32700);
  bad.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
  assert.ok(await until(() => bad.events.messages.length > 1));
  assert.match(bad.events.messages[1].error.message, /not initialized/);
  bad.ws.close();
});

test('pings every ws_ping_interval; a peer that stops answering is dropped', async () => {
  const live = rawWs();
  assert.ok(await live.opened);
  assert.ok(await until(() => live.events.pings >= 2, 5000), 'the ws client answers pings and stays');
  assert.equal(live.events.close, null);
  live.ws.close();
  // A client that completes the handshake and then says nothing at all.
  const before = gw.status().sessions;
  const sock = net.connect(Number(gw.status().listen.split(':')[1]), '127.0.0.1');
  await new Promise((r) => sock.on('connect', r));
  sock.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n`);
  let got = '';
  let closed = false;
  sock.on('data', (d) => { got += d.toString('latin1'); });
  sock.on('close', () => { closed = true; });
  assert.ok(await until(() => got.includes('101 Switching Protocols')));
  assert.match(got, /Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=/);
  assert.ok(await until(() => gw.status().sessions === before + 1));
  assert.ok(await until(() => closed, 8000), 'dropped after two silent intervals');
  assert.ok(await until(() => gw.status().sessions === before));
  assert.match(gw.log(), /no frame from its WebSocket client/);
});
