// SPDX-License-Identifier: ISC
// Several per-session WebSocket upstreams at once: the reference server
// behind a WebSocket server of the `ws` package (t/fixtures/ws-upstream.mjs)
// and the same server over Streamable HTTP, and mcp-demo-server behind the
// `ws` package too, all isolation = "per-session", with several SDK clients
// at the same time doing sampling, elicitation, roots, progress and logging
// through each.  Every session has its own WebSocket instances in the ws
// workers.  A message that the worker answers at once (list_changed makes
// it send tools/list) followed in the same read by the start of a frame
// larger than a read (the reference server's lists, a 200 kB answer of the
// demo's big tool) once aborted the worker: it re-entered wslay from its
// message callback, the inner call took the partial frame, the outer one
// then reset it (wslay_queue_tail: Assertion 'queue->tail' failed), and
// every session's instance died with the worker.  The demo's toggle_tool
// and big, called together, make that order on every round; the reference
// server makes it by chance when its instances start.  No worker may
// restart, and every call must succeed.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startGateway, startNodeServer, nodeModules, srcdir, bin, sleep } from '../lib/gateway.mjs';

const everything = path.join(nodeModules, '@modelcontextprotocol/server-everything/dist/index.js');
const fixture = (f) => path.join(srcdir, 't/fixtures', f);
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const CLIENTS = 4;
const ROUNDS = 2;
let gw, http, ws, demo;

before(async () => {
  http = await startNodeServer([everything, 'streamableHttp']);
  ws = await startNodeServer([fixture('ws-upstream.mjs'), '--', process.execPath, everything, 'stdio']);
  demo = await startNodeServer([fixture('ws-upstream.mjs'), '--', bin.demo, '--test-tools', '--name', 'd']);
  gw = await startGateway({ servers: [
    `{ name = "h"; transport = "http"; url = "http://127.0.0.1:${http.port}/mcp"; isolation = "per-session"; }`,
    `{ name = "w"; transport = "ws"; url = "ws://127.0.0.1:${ws.port}/mcp"; isolation = "per-session"; }`,
    `{ name = "d"; transport = "ws"; url = "ws://127.0.0.1:${demo.port}/mcp"; isolation = "per-session"; }`,
  ] });
});
after(async () => {
  const code = await gw?.stop();
  for (const srv of [http, ws, demo]) await srv?.stop();
  if (gw) assert.equal(code, 0);
});

// A client that answers sampling, elicitation and roots, and keeps logs.
async function connect(n) {
  const seen = { sampling: 0, elicitation: 0, roots: 0, logs: [] };
  const client = new Client({ name: `ws-sessions-${n}`, version: '1' }, {
    capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } },
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    seen.sampling++;
    return { role: 'assistant', content: { type: 'text', text: `sampled by client ${n}` }, model: 'm' };
  });
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
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    seen.roots++;
    return { roots: [{ uri: `file:///srv/client-${n}`, name: `client ${n}` }] };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (m) => { seen.logs.push(m.params); });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return { client, seen };
}

// Wait until the session's own instances have announced their
// capability-dependent tools (the reference server adds them after
// initialization, with list_changed).
async function conditionalTools(client) {
  for (let i = 0; i < 200; i++) {
    const { tools } = await client.listTools();
    if (['h', 'w'].every((p) => tools.some((t) => t.name === `${p}__trigger-sampling-request`) &&
        tools.some((t) => t.name === `${p}__get-roots-list`)))
      return;
    await sleep(100);
  }
  throw new Error(`the conditional tools did not appear\n--- log ---\n${gw.log()}`);
}

// One client's work through the three upstreams.
async function work(n) {
  const { client, seen } = await connect(n);
  await client.setLoggingLevel('debug');
  await conditionalTools(client);
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of ['h', 'w']) {
      assert.equal(text(await client.callTool({ name: `${p}__echo`, arguments: { message: `${n}.${round}` } })),
        `Echo: ${n}.${round}`);
      assert.match(text(await client.callTool({ name: `${p}__trigger-sampling-request`, arguments: { prompt: 'q' } })),
        new RegExp(`sampled by client ${n}`));
      assert.match(text(await client.callTool({ name: `${p}__trigger-elicitation-request`, arguments: {} })), /accept/i);
      assert.match(text(await client.callTool({ name: `${p}__get-roots-list`, arguments: {} })),
        new RegExp(`file:///srv/client-${n}`));
      const progress = [];
      assert.match(text(await client.callTool({ name: `${p}__trigger-long-running-operation`,
        arguments: { duration: 1, steps: 3 } }, undefined, { onprogress: (x) => progress.push(x.progress) })), /completed/i);
      assert.equal(progress.length, 3, `${p}: progress for client ${n}`);
    }
  }
  // The demo behind ws: a list_changed, then a frame of 200 kB.
  for (let round = 0; round < ROUNDS; round++) {
    const [toggled, big] = await Promise.all([
      client.callTool({ name: 'd__toggle_tool', arguments: {} }),
      client.callTool({ name: 'd__big', arguments: { bytes: 200000 } }),
    ]);
    assert.match(text(toggled), /^extra tool (on|off)$/);
    assert.equal(text(big).length, 200000);
    assert.match(text(await client.callTool({ name: 'd__sample', arguments: { prompt: 'q' } })),
      new RegExp(`sampled: sampled by client ${n}`));
    assert.match(text(await client.callTool({ name: 'd__elicit', arguments: {} })), /^action=accept/);
    assert.match(text(await client.callTool({ name: 'd__roots', arguments: {} })), new RegExp(`file:///srv/client-${n}`));
    const progress = [];
    assert.match(text(await client.callTool({ name: 'd__sleep', arguments: { ms: 300, steps: 3 } },
      undefined, { onprogress: (x) => progress.push(x.progress) })), /^slept 300 ms$/);
    assert.equal(progress.length, 3, `d: progress for client ${n}`);
    const logs = seen.logs.length;
    await client.callTool({ name: 'd__log', arguments: { level: 'info', message: `client ${n}`, count: 20 } });
    for (let i = 0; i < 50 && seen.logs.length < logs + 20; i++) await sleep(20);
    assert.equal(seen.logs.filter((l) => l.data === `client ${n}`).length, 20 * (round + 1), `d: logs for client ${n}`);
  }
  // The reference server's simulated logging, one message at once.
  const simulated = () => seen.logs.filter((l) => /level[- ]message/i.test(String(l.data))).length;
  for (const p of ['h', 'w'])
    await client.callTool({ name: `${p}__toggle-simulated-logging`, arguments: {} });
  for (let i = 0; i < 100 && simulated() < 2; i++) await sleep(100);
  for (const p of ['h', 'w'])
    await client.callTool({ name: `${p}__toggle-simulated-logging`, arguments: {} });
  assert.ok(simulated() >= 2, `simulated log messages of h and w reach client ${n}`);
  assert.equal(seen.sampling, 3 * ROUNDS);
  assert.equal(seen.elicitation, 3 * ROUNDS);
  assert.ok(seen.roots >= 2, `roots asked of client ${n}`);
  await client.close();
}

test('several per-session WebSocket instances at once: every call succeeds, no worker restarts', async () => {
  const results = await Promise.allSettled(Array.from({ length: CLIENTS }, (_, n) => work(n)));
  const failed = results.filter((r) => r.status === 'rejected').map((r) => r.reason?.stack ?? String(r.reason));
  const log = gw.log();
  assert.doesNotMatch(log, /killed by signal|restarting in/, `no worker died\n--- log ---\n${log}`);
  for (const u of gw.status().upstreams)
    assert.equal(u.restarts, 0, `upstream ${u.name} never restarted\n--- log ---\n${log}`);
  assert.deepEqual(failed, [], `every client's calls succeed\n--- log ---\n${log}`);
});
