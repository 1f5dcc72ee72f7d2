// SPDX-License-Identifier: ISC
// Event streams stay open for as long as they are used, and idle ones are
// kept alive with heartbeats (every stream was once cut 30 s after its
// request arrived).  All the long cases run at the same time, so the file
// takes about 95 s:
// - a 60 s call with progress over Streamable HTTP, the SDK client not
//   allowed to resume, and over legacy SSE;
// - a standalone GET stream and a legacy SSE stream idle for 90 s, then a
//   list change that must reach both;
// - the raw bytes of an idle GET stream and /sse: heartbeat comments.
// Legacy SSE clients also get list_changed and resources/updated.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, demo, sleep, rawSession } from '../lib/gateway.mjs';

let gw;
before(async () => { gw = await startGateway({ servers: [demo('demo')] }); });
after(async () => { assert.equal(await gw.stop(), 0); });

// An SDK client over Streamable HTTP that may not resume a cut stream.
async function streamable(name) {
  const seen = { toolsChanged: 0, updated: [] };
  const client = new Client({ name, version: '1' });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.toolsChanged++; });
  const transport = new StreamableHTTPClientTransport(new URL(gw.url), {
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
  });
  let broken = null;
  transport.onerror = (e) => { broken = e; };
  await client.connect(transport);
  return { client, seen, broken: () => broken };
}

// An SDK client over the legacy HTTP+SSE transport.
async function legacy(name) {
  const seen = { toolsChanged: 0, updated: [] };
  const client = new Client({ name, version: '1' });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { seen.toolsChanged++; });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { seen.updated.push(n.params.uri); });
  await client.connect(new SSEClientTransport(new URL(`${gw.base}/sse`)));
  return { client, seen };
}

// Read a raw event stream for ms milliseconds; whether it ended early.
async function readRaw(url, headers, ms) {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  const timer = setTimeout(() => ac.abort(), ms);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) { ended = true; break; }
      text += decoder.decode(value, { stream: true });
    }
  } catch { /* aborted: still open when we stopped reading */ }
  clearTimeout(timer);
  return { text, ended };
}

const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

test('legacy SSE clients get list_changed and resources/updated', async () => {
  const { client, seen } = await legacy('legacy-notes');
  await client.subscribeResource({ uri: 'demo://counter' });
  await client.callTool({ name: 'demo__touch', arguments: {} });
  await client.callTool({ name: 'demo__toggle_tool', arguments: {} });
  for (let i = 0; i < 100 && (seen.updated.length === 0 || seen.toolsChanged === 0); i++) await sleep(50);
  assert.deepEqual(seen.updated, ['demo://counter']);
  assert.ok(seen.toolsChanged >= 1);
  await client.callTool({ name: 'demo__toggle_tool', arguments: {} });
  await client.close();
});

test('long calls and idle streams outlive every timeout', async () => {
  const http = await streamable('long-http');
  const old = await legacy('long-sse');
  const idleHttp = await streamable('idle-http');
  const idleSse = await legacy('idle-sse');
  const session = await rawSession(gw);
  const opts = (progress) => ({ timeout: 150000, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p.progress) });
  const p1 = [];
  const p2 = [];
  const [r1, r2, rawGet, rawSse] = await Promise.all([
    http.client.callTool({ name: 'demo__sleep', arguments: { ms: 60000, steps: 30 } }, undefined, opts(p1)),
    old.client.callTool({ name: 'demo__sleep', arguments: { ms: 60000, steps: 30 } }, undefined, opts(p2)),
    readRaw(gw.url, { 'mcp-session-id': session }, 40000),
    readRaw(`${gw.base}/sse`, {}, 40000),
    sleep(90000),
  ]);
  assert.equal(text(r1), 'slept 60000 ms');
  assert.equal(p1.length, 30);
  assert.equal(http.broken(), null, 'the POST stream was never cut');
  assert.equal(text(r2), 'slept 60000 ms');
  // The SDK's legacy client handles a notification a microtask later than
  // a response that arrives in the same read, and drops progress for a
  // request already answered: the last step may be lost there.
  assert.ok(p2.length >= 29, `legacy progress: ${p2.length}`);
  // The raw streams stayed open, and carried heartbeat comments.
  for (const [what, r] of [['GET /mcp', rawGet], ['GET /sse', rawSse]]) {
    assert.equal(r.ended, false, `${what} is still open after 40 s`);
    assert.ok((r.text.match(/^: keepalive$/gm) ?? []).length >= 2, `${what} heartbeats:\n${r.text}`);
  }
  // After 90 s of silence, both idle clients still hear a list change.
  await http.client.callTool({ name: 'demo__toggle_tool', arguments: {} });
  for (let i = 0; i < 100 && (idleHttp.seen.toolsChanged === 0 || idleSse.seen.toolsChanged === 0); i++) await sleep(50);
  assert.ok(idleHttp.seen.toolsChanged >= 1, 'the idle GET stream was not cut');
  assert.ok(idleSse.seen.toolsChanged >= 1, 'the idle legacy stream was not cut');
  assert.equal(idleHttp.broken(), null);
  await http.client.callTool({ name: 'demo__toggle_tool', arguments: {} });
  assert.equal(gw.status().sessions >= 4, true, 'no session was lost and reopened');
  for (const c of [http, old, idleHttp, idleSse]) await c.client.close();
});
