// SPDX-License-Identifier: ISC
// Traces through the gateway (tracing = { ... }), checked with
// OpenTelemetry's own code: an upstream on the MCP SDK that traces itself
// with OpenTelemetry's SDK (fixtures/traced-server.mjs) takes the context
// the gateway passes on in params._meta with OpenTelemetry's W3C
// propagator and exports its span with OpenTelemetry's OTLP/HTTP exporter
// to the same collector as the gateway.  The chain must be whole: the
// client's traceparent, the gateway's SERVER span, its CLIENT span, the
// upstream's span; the gateway's spans carry the MCP attributes, are
// encoded as OpenTelemetry's own OTLP JSON encoder (otlp-transformer,
// through the exporter) encodes spans, and never hold an argument.  An
// HTTP upstream (the MCP SDK's Streamable HTTP server) gets the context
// in the traceparent header as well; a WebSocket's upgrade carries the
// context of the messages on it.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import WebSocket from 'ws';
import { startGateway, q, srcdir, sleep } from '../lib/gateway.mjs';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const SECRET = 'SECRET-ARGUMENT-TEXT-5309';

let gw, collector, upstream, port;
const posts = [];		// {headers, body} of every POST to the collector
const seenHttp = [];		// what the HTTP upstream got: {header, meta}

// Every span the collector got: {service, span}.
function spans() {
  const out = [];
  for (const p of posts) {
    for (const rs of p.body.resourceSpans ?? []) {
      const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue;
      for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) out.push({ service, span });
    }
  }
  return out;
}

async function until(pred, what, ms = 15000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = pred();
    if (v) return v;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(posts.map((p) => p.body))}`);
}

const attr = (span, key) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : (v.stringValue ?? v.intValue);
};

// An MCP SDK Streamable HTTP upstream that records the trace context of
// each tools/call, header and _meta.
async function httpUpstream() {
  const sessions = new Map();
  const srv = http.createServer(async (req, res) => {
    const sid = req.headers['mcp-session-id'];
    let transport = sid !== undefined ? sessions.get(sid) : undefined;
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID, enableJsonResponse: true,
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      const server = new Server({ name: 'http-probe', version: '1' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'probe', inputSchema: { type: 'object' } }] }));
      server.setRequestHandler(CallToolRequestSchema, async (r, extra) => {
        seenHttp.push({ header: extra.requestInfo?.headers?.traceparent, meta: r.params._meta?.traceparent });
        return { content: [{ type: 'text', text: 'probed' }] };
      });
      await server.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return srv;
}

before(async () => {
  collector = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' &&
          (req.headers['content-type'] ?? '').startsWith('application/json')) {
        posts.push({ headers: req.headers, text: Buffer.concat(chunks).toString(), body: JSON.parse(Buffer.concat(chunks).toString()) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        res.writeHead(415).end();
      }
    });
  });
  await new Promise((r) => collector.listen(0, '127.0.0.1', r));
  port = collector.address().port;
  upstream = await httpUpstream();
  const otlp = `http://127.0.0.1:${port}/v1/traces`;
  gw = await startGateway({
    globals: `tracing = { endpoint = ${q(otlp)}; sample = 1.0; service_name = "gw-test"; headers = { X-Collector-Key = "k1"; }; };`,
    servers: [
      `{ name = "traced"; transport = "stdio"; command = [ ${q(process.execPath)}, ${q(path.join(srcdir, 't/fixtures/traced-server.mjs'))}, ${q(otlp)} ]; }`,
      `{ name = "h"; transport = "http"; url = "http://127.0.0.1:${upstream.address().port}/mcp"; }`,
    ],
  });
});

after(async () => {
  const code = await gw?.stop();
  upstream?.closeAllConnections();
  collector?.closeAllConnections();
  if (upstream) await new Promise((r) => upstream.close(r));
  if (collector) await new Promise((r) => collector.close(r));
  if (gw) assert.equal(code, 0, 'the daemon exits cleanly');
});

test('client → gateway SERVER span → gateway CLIENT span → the upstream\'s span', async () => {
  const client = new Client({ name: 'traced-client', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  const r = await client.callTool({ name: 'traced__work', arguments: { text: SECRET }, _meta: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'vendor=v1' } });
  const passed = r.content[0].text.replace(/^traceparent /, '');
  assert.match(passed, new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`), 'the upstream got the trace');
  assert.notEqual(passed.slice(36, 52), PARENT, 'its parent is the gateway\'s span, not the client\'s');

  const all = await until(() => {
    const s = spans().filter((x) => x.span.traceId === TRACE);
    return s.length >= 3 ? s : undefined;
  }, 'three spans of the trace');
  const server = all.find((x) => x.service === 'gw-test' && x.span.kind === 2)?.span;
  const call = all.find((x) => x.service === 'gw-test' && x.span.kind === 3)?.span;
  const up = all.find((x) => x.service === 'traced-fixture')?.span;
  assert.ok(server && call && up, JSON.stringify(all));
  assert.equal(server.parentSpanId, PARENT, 'the SERVER span continues the client\'s');
  assert.equal(call.parentSpanId, server.spanId, 'the CLIENT span is the SERVER span\'s child');
  assert.equal(call.spanId, passed.slice(36, 52), 'the upstream was given the CLIENT span');
  assert.equal(up.parentSpanId, call.spanId, 'the upstream\'s span is the CLIENT span\'s child');
  assert.equal(server.traceState, 'vendor=v1');

  assert.equal(server.name, 'tools/call traced__work');
  assert.equal(attr(server, 'mcp.method.name'), 'tools/call');
  assert.equal(attr(server, 'gen_ai.tool.name'), 'traced__work');
  assert.equal(attr(server, 'gen_ai.operation.name'), 'execute_tool');
  assert.equal(attr(server, 'mcp_supervisor.upstream'), 'traced');
  assert.equal(attr(server, 'mcp_supervisor.outcome'), 'ok');
  assert.match(attr(server, 'mcp.session.id'), /^[0-9a-f]{8}$/);
  assert.ok(attr(server, 'jsonrpc.request.id') !== undefined);
  assert.equal(attr(call, 'mcp_supervisor.upstream'), 'traced');
  assert.ok(BigInt(server.startTimeUnixNano) <= BigInt(call.startTimeUnixNano));
  assert.ok(BigInt(call.endTimeUnixNano) <= BigInt(server.endTimeUnixNano));
  for (const p of posts) assert.ok(!p.text.includes(SECRET), 'no argument in any span');
  const gwPosts = posts.filter((p) => p.text.includes('"gw-test"'));
  assert.ok(gwPosts.every((p) => p.headers['x-collector-key'] === 'k1'), 'the configured headers');
  await client.close();
});

test('the gateway encodes spans as OpenTelemetry\'s OTLP JSON encoder does', async () => {
  // The upstream's spans were encoded by otlp-transformer's JSON
  // serializer (through the exporter): the gateway's have the same
  // members with the same JSON types, and the same envelope.
  const ref = spans().filter((x) => x.service === 'traced-fixture').map((x) => x.span);
  const ours = spans().filter((x) => x.service === 'gw-test').map((x) => x.span);
  assert.ok(ref.length > 0 && ours.length > 0);
  const types = new Map();
  for (const s of ref) for (const [k, v] of Object.entries(s)) types.set(k, typeof v);
  for (const s of ours) {
    for (const [k, v] of Object.entries(s)) {
      assert.ok(types.has(k) || k === 'traceState', `${k} is a member OpenTelemetry writes`);
      if (types.has(k)) assert.equal(typeof v, types.get(k), `${k} is a ${types.get(k)}`);
    }
    assert.match(s.traceId, /^[0-9a-f]{32}$/);
    assert.match(s.spanId, /^[0-9a-f]{16}$/);
    for (const a of s.attributes) {
      assert.deepEqual(Object.keys(a).sort(), ['key', 'value']);
      const [kind] = Object.keys(a.value);
      assert.ok(['stringValue', 'intValue'].includes(kind), kind);
      assert.equal(typeof a.value[kind], 'string');
    }
    assert.equal(typeof s.status.code, typeof (ref[0].status?.code ?? 0));
  }
  const refPost = posts.find((p) => p.text.includes('"traced-fixture"')).body;
  const ourPost = posts.find((p) => p.text.includes('"gw-test"')).body;
  assert.deepEqual(Object.keys(ourPost), Object.keys(refPost));
  assert.deepEqual(Object.keys(ourPost.resourceSpans[0]).filter((k) => k !== 'schemaUrl').sort(),
    Object.keys(refPost.resourceSpans[0]).filter((k) => k !== 'schemaUrl').sort());
});

test('an HTTP upstream gets the context in its traceparent header too', async () => {
  const client = new Client({ name: 'traced-client', version: '1' });
  // The client's context in the HTTP header this time, not in _meta.
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url), {
    requestInit: { headers: { traceparent: `00-${TRACE}-${PARENT}-01` } },
  }));
  await client.callTool({ name: 'h__probe', arguments: { text: SECRET } });
  const seen = seenHttp.at(-1);
  assert.match(seen.header, new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
  assert.equal(seen.header, seen.meta, 'the header is _meta\'s');
  await client.close();
  let text = '';
  const end = Date.now() + 15000;
  while (Date.now() < end && !/mcp_supervisor_trace_spans_total\{outcome="exported"\} [4-9]/.test(text)) {
    text = await (await fetch(`${gw.base}/metrics`)).text();
    await sleep(100);
  }
  assert.match(text, /mcp_supervisor_trace_spans_total\{outcome="exported"\} [4-9]/, 'the spans exported are counted');
  assert.match(text, /mcp_supervisor_trace_spans_total\{outcome="dropped"\} 0/);
});

test('a WebSocket upgrade\'s traceparent is the parent of its messages', async () => {
  const TRACE2 = 'a3ce929d0e0e47364bf92f3577b34da6';
  const ws = new WebSocket(gw.base.replace(/^http/, 'ws') + '/ws', 'mcp', {
    headers: { traceparent: `00-${TRACE2}-${PARENT}-01` },
  });
  const answers = new Map();
  ws.on('message', (d) => { const m = JSON.parse(d.toString()); if (m.id !== undefined) answers.set(m.id, m); });
  await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
  const rpc = async (msg) => {
    ws.send(JSON.stringify(msg));
    if (msg.id === undefined) return undefined;
    return until(() => answers.get(msg.id), `answer ${msg.id}`);
  };
  await rpc({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ws', version: '1' } } });
  await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const r = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'traced__work', arguments: { text: SECRET } } });
  assert.match(r.result.content[0].text, new RegExp(`^traceparent 00-${TRACE2}-[0-9a-f]{16}-01$`));
  ws.close();
  const server = await until(() => spans().find((x) => x.span.traceId === TRACE2 && x.span.kind === 2 && x.service === 'gw-test'), 'the WebSocket request\'s span');
  assert.equal(server.span.parentSpanId, PARENT);
  assert.equal(attr(server.span, 'mcp_supervisor.transport'), 'ws');
});

// A daemon that stops (a rolling restart, a drain's end) exports the spans
// of its last calls: its batch goes to mcp-otel before it is told to stop,
// and mcp-otel posts what it holds before it exits (both were dropped).
test('the last spans are exported when the daemon stops', async () => {
  const otlp = `http://127.0.0.1:${port}/v1/traces`;
  const gw2 = await startGateway({
    globals: `tracing = { endpoint = ${q(otlp)}; sample = 1.0; service_name = "gw-stop"; };`,
    servers: [`{ name = "h"; transport = "http"; url = "http://127.0.0.1:${upstream.address().port}/mcp"; }`],
  });
  const client = new Client({ name: 'stop', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw2.url)));
  for (let i = 0; i < 3; i++) await client.callTool({ name: 'h__probe', arguments: {} });
  await client.close();
  // At once: within the batch's half second.
  assert.equal(await gw2.stop(), 0);
  const mine = spans().filter((s) => s.service === 'gw-stop' && attr(s.span, 'gen_ai.tool.name') === 'h__probe' && s.span.kind === 2);
  assert.equal(mine.length, 3, JSON.stringify(spans().filter((s) => s.service === 'gw-stop').map((s) => s.span.name)));
});

// A collector key read from a file (${file:}) is read by the exporter when
// it starts: a reload starts it again, so a rotated key is sent from then
// on (it kept the old key until the daemon restarted).
test('a reload sends a rotated collector key', async () => {
  const otlp = `http://127.0.0.1:${port}/v1/traces`;
  const dir = mkdtempSync(path.join(tmpdir(), 'mcps-otel-key-'));
  const keyFile = path.join(dir, 'key');
  writeFileSync(keyFile, 'key-one\n', { mode: 0o600 });
  const gw3 = await startGateway({
    globals: `tracing = { endpoint = ${q(otlp)}; sample = 1.0; service_name = "gw-key"; headers = { X-Collector-Key = ${q(`\${file:${keyFile}}`)}; }; };`,
    servers: [`{ name = "h"; transport = "http"; url = "http://127.0.0.1:${upstream.address().port}/mcp"; }`],
  });
  try {
    const keys = () => posts.filter((p) => p.body.resourceSpans?.some((rs) => rs.resource?.attributes?.some((a) => a.key === 'service.name' && a.value.stringValue === 'gw-key'))).map((p) => p.headers['x-collector-key']);
    const client = new Client({ name: 'key', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gw3.url)));
    await client.callTool({ name: 'h__probe', arguments: {} });
    await until(() => keys().includes('key-one'), 'a post with the first key');
    writeFileSync(keyFile, 'key-two\n');
    gw3.mcpctl('reload');
    await sleep(500);
    await client.callTool({ name: 'h__probe', arguments: {} });
    await until(() => keys().includes('key-two'), 'a post with the rotated key');
    await client.close();
  } finally {
    assert.equal(await gw3.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  }
});
